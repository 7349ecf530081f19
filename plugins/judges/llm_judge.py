"""The base every LLM judge and LLM-scored metric of ragassay stands on: one generator, explanation first,
validated replies, bounded re-asks, never a guess.

A judge-like component mixes in :class:`LLMJudging` and gives its options the fields of :class:`JudgeOptions`
(``generator``, ``params``) plus its own ``prompt_version``. It then asks in one of two ways:

- :meth:`LLMJudging.ask`: structured output through :func:`ragassay.llm.ask_structured` (native structured output
  on chat-capable LLM backends, a JSON prompt on plain generators); the response model puts the explanation
  first. An invalid reply is re-asked with the error (the generator's ``structured_retries``, or
  ``ask_structured``'s bound for plain generators), then comes back unparsed with the raw reply.
- :meth:`LLMJudging.ask_text`: the paper's prompt as printed, a free-text reply, the verdict read as a whole word
  (:func:`verdict_words`: ``NO`` inside ``NOT`` or ``KNOWN`` is not a verdict); a reply without one is re-asked
  at most :data:`TEXT_RETRIES` times with a corrective message.

Either way :meth:`LLMJudging.unusable` turns a reply without a usable verdict into ``Unscored`` with the raw reply
and the error in its details. The judge's identity (:attr:`LLMJudging.identity`) names the component, the
generator, the prompt version and a digest of everything else that shapes the request. Model calls are counted
as the evaluation's own cost by the runner: nothing to do here.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import GenerationRequest, GeneratorRef, Unscored
from ragassay.llm import JudgeReply, ask_structured, verdict_words

#: Corrective re-asks after a free-text reply without a verdict (at most 1 + TEXT_RETRIES replies).
TEXT_RETRIES = 2


class JudgeOptions(BaseModel):
    """Options every LLM judge has: the judge model and its decoding parameters."""

    model_config = ConfigDict(extra="forbid")

    generator: GeneratorRef = Field(
        description="The judge model: any generator, a name or { name, options } (required: ragassay never picks "
        "a judge model for you)."
    )
    params: dict[str, Any] = Field(
        default_factory=lambda: {"temperature": 0.0},
        description="Decoding parameters of every judge call (default: greedy).",
    )


def fill(template: str, values: dict[str, str]) -> str:
    """Replace ``{name}`` fields in one pass (text inside the values is never re-substituted; other braces stay)."""
    pattern = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
    return pattern.sub(lambda m: values[m.group(1)], template)


def one_verdict(value: Any, choices: Sequence[str]) -> str:
    """The verdict a structured field holds: one of ``choices`` alone, ignoring case, surrounding blanks, quotes,
    markdown and end punctuation ("YES", " no. ", "**Correct**"); ValueError otherwise ("NOT KNOWN", "not
    correct", "yes or no"), so that the model is asked again with the reason."""
    word = str(value).strip().strip("*_`'\"#:.!").strip().lower()
    if word not in {c.lower() for c in choices}:
        raise ValueError(f"must be exactly one of {', '.join(choices)}, got {str(value)[:80]!r}")
    return word


class LLMJudging:
    """Mixin for judges and metrics that ask a generator for a verdict (see the module docstring).

    The host class is a ragassay component whose ``options`` has ``generator``, ``params`` and
    ``prompt_version``; ``prompt_text()`` may return the prompt template, so that a changed prompt changes the
    identity.
    """

    _judge_model: Any = None

    def judge_model(self) -> Any:
        """The judge generator, built once from ``options.generator``."""
        if self._judge_model is None:
            self._judge_model = self.context.build(self.options.generator)
        return self._judge_model

    def prompt_text(self) -> str:
        """The prompt template in use (part of the identity's digest)."""
        return ""

    @property
    def identity(self) -> str:
        """``name:generator:prompt_version:digest``; the digest covers the generator's options, the decoding
        parameters and the prompt text."""
        o = self.options
        shaped = {"generator": o.generator.options, "params": o.params, "prompt": self.prompt_text()}
        digest = hashlib.sha256(json.dumps(shaped, sort_keys=True, default=str).encode()).hexdigest()[:8]
        return f"{self.name}:{o.generator.name}:{o.prompt_version}:{digest}"

    async def ask(self, messages: Sequence[dict[str, Any]], response_model: type[BaseModel]) -> JudgeReply:
        """Structured output (explanation first) through :func:`ragassay.llm.ask_structured`."""
        return await ask_structured(self.judge_model(), messages, response_model, params=self.options.params)

    async def ask_text(self, messages: Sequence[dict[str, Any]], choices: Sequence[str]) -> JudgeReply:
        """A free-text reply whose first whole-word verdict among ``choices`` decides (``parsed`` is that word,
        lower-cased); re-asked with a corrective message while the reply has none."""
        generator, asked, raw = self.judge_model(), list(messages), ""
        for _ in range(TEXT_RETRIES + 1):
            question = str(asked[-1].get("content", ""))
            generation = await generator.generate(
                GenerationRequest(question=question, messages=asked, params=dict(self.options.params))
            )
            raw = generation.text or ""
            found = verdict_words(raw, choices)
            if found:
                return JudgeReply(found[0], raw)
            asked = [
                *asked,
                {"role": "assistant", "content": raw},
                {"role": "user", "content": f"Your reply gives no verdict. Answer with one of: {', '.join(choices)}."},
            ]
        wanted = " or ".join(choices)
        return JudgeReply(None, raw, f"no verdict ({wanted}) as a whole word; gave up after {TEXT_RETRIES + 1} replies")

    def unusable(self, reply: JudgeReply) -> Unscored:
        """Unscored for a reply without a usable verdict, with the raw reply and the error in the details."""
        return Unscored(
            reason=f"judge reply not usable: {reply.error}",
            details={"raw": reply.raw, "error": reply.error, "judge": self.identity},
        )
