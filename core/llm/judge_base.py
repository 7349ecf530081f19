"""The base every LLM judge and LLM-scored metric stands on: one judge model, explanation first, validated
replies, bounded re-asks, never a guess.

Write a judge (or a metric) by mixing :class:`LLMJudging` into :class:`ragassay.Judge` (or
:class:`ragassay.Metric`), with options built on :class:`JudgeOptions` plus a ``prompt_version``::

    class Polite(BaseModel):                       # the reply: explanation first, then the verdict
        explanation: str = Field(description="Why, written before the verdict.")
        verdict: str = Field(description="yes or no")

        @field_validator("verdict", mode="before")
        @classmethod
        def _yes_or_no(cls, value):
            return one_verdict(value, ["yes", "no"])    # anything else is re-asked with the reason

    class PoliteJudge(LLMJudging, Judge):
        name = "polite"

        class Options(JudgeOptions):
            prompt_version: Literal["polite-1"] = Field("polite-1", description="Version of the prompt.")

        def prompt_text(self):
            return PROMPT                              # part of the identity

        async def judge(self, sample, output):
            prompt = fill(PROMPT, {"question": sample.question, "answer": output.answer})
            reply = await self.ask([{"role": "user", "content": prompt}], Polite)
            if reply.parsed is None:                   # still invalid after the re-asks: never guessed
                unusable = self.unusable(reply)
                return Judgement(judge=self.name, verdict="unscored", score=None, explanation=unusable.reason,
                                 judge_id=self.identity, details=unusable.details)
            correct = reply.parsed.verdict == "yes"
            return Judgement(judge=self.name, verdict="correct" if correct else "incorrect", score=float(correct),
                             explanation=reply.parsed.explanation, judge_id=self.identity)

``ragassay new-plugin NAME --kind llm_judge`` writes such a judge as a package, with tests against a scripted
loopback model; docs/judges.md says when to write a judge and when a metric.

A judge asks in one of two ways:

- :meth:`LLMJudging.ask`: structured output through :func:`ragassay.llm.ask_structured` (native structured output
  on chat-capable LLM backends, a JSON prompt on plain generators); the response model puts the explanation
  first. An invalid reply is re-asked with the error (the generator's ``structured_retries``, or
  ``ask_structured``'s bound for plain generators), then comes back unparsed with the raw reply.
- :meth:`LLMJudging.ask_text`: a prompt as a paper prints it, a free-text reply, the verdict read as a whole word
  (:func:`ragassay.llm.verdict_words`: ``NO`` inside ``NOT`` or ``KNOWN`` is not a verdict); a reply without one
  is re-asked at most :data:`TEXT_RETRIES` times with a corrective message.

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
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..components import GenerationRequest
from ..errors import ProviderError
from ..models import Unscored
from ..refs import GeneratorRef
from .exemplars import Exemplar, base_version, exemplar_version, with_exemplars
from .judging import JudgeReply, ask_structured, verdict_words

#: Corrective re-asks after a free-text reply without a verdict (at most 1 + TEXT_RETRIES replies).
TEXT_RETRIES = 2


class JudgeOptions(BaseModel):
    """Options every LLM judge has: the judge model (``generator``) and its decoding parameters (``params``).

    Subclass it for your judge's options and add a ``prompt_version``, a fixed literal that you change whenever
    the prompt or the reply model changes (another value is then a configuration error, and stored values of the
    old version are never mistaken for the new one)::

        class Options(JudgeOptions):
            prompt_version: Literal["polite-1"] = Field("polite-1", description="Version of the prompt.")
            max_answer_chars: int = Field(4000, ge=100, description="Answer text beyond this is cut.")
    """

    model_config = ConfigDict(extra="forbid")

    generator: GeneratorRef = Field(
        description="The judge model: any generator, a name or { name, options } (required: ragassay never picks "
        "a judge model for you)."
    )
    params: dict[str, Any] = Field(
        default_factory=lambda: {"temperature": 0.0},
        description="Decoding parameters of every judge call (default: greedy).",
    )
    exemplars: list[Exemplar] = Field(
        default_factory=list,
        description="Items people judged, shown before the item to judge (ragassay align writes them); they make "
        "the prompt version '<version>+ex-<digest>' (docs/labelling.md).",
    )

    @model_validator(mode="wrap")
    @classmethod
    def _exemplar_version(cls, data: Any, handler: Any) -> Any:
        """With exemplars, ``prompt_version`` is derived from them (ragassay.llm.exemplars); a config may omit it
        or must name exactly the derived one."""
        asked = data.get("prompt_version") if isinstance(data, dict) else None
        if isinstance(data, dict) and asked is not None and base_version(asked) != asked:
            data = {**data, "prompt_version": base_version(asked)}
        options = handler(data)
        if not hasattr(options, "prompt_version") or not isinstance(data, dict):
            return options
        derived = exemplar_version(options.prompt_version, options.exemplars)
        if asked is not None and asked != derived:
            why = "with these exemplars it is" if options.exemplars else "without exemplars it is"
            raise ValueError(f"prompt_version '{asked}' does not match the exemplars: {why} '{derived}'")
        options.prompt_version = derived
        return options


def fill(template: str, values: dict[str, str]) -> str:
    """Replace the ``{name}`` fields of ``template`` by ``values`` in one pass: text inside the values is never
    re-substituted and other braces stay, so answers and JSON examples in a prompt are safe (``str.format`` would
    fail on them). ``fill("Q: {question} {x}", {"question": "a {b}"}) == "Q: a {b} {x}"``."""
    if not values:
        return template
    pattern = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
    return pattern.sub(lambda m: values[m.group(1)], template)


def one_verdict(value: Any, choices: Sequence[str]) -> str:
    """The verdict a structured reply's field holds: one of ``choices`` alone, lower-cased, ignoring case,
    surrounding blanks, quotes, markdown and end punctuation ("YES", " no. ", "**Correct**"); ValueError otherwise
    ("NOT KNOWN", "not correct", "yes or no"). Use it in a ``field_validator(..., mode="before")`` of the reply
    model, so that a reply without a clean verdict is re-asked with the reason."""
    word = str(value).strip().strip("*_`'\"#:.!").strip().lower()
    if word not in {c.lower() for c in choices}:
        raise ValueError(f"must be exactly one of {', '.join(choices)}, got {str(value)[:80]!r}")
    return word


class LLMJudging:
    """Mixin for judges and metrics that ask a generator for a verdict (see the module docstring).

    Put it first in the bases (``class MyJudge(LLMJudging, Judge)``). The host's ``Options`` must have the fields
    of :class:`JudgeOptions` (``generator``, ``params``) and a ``prompt_version`` (checked when the class is
    defined). Override :meth:`prompt_text` to return the prompt template, so that a changed prompt changes the
    identity; set ``requires_chat = True`` when the judge needs a chat-capable generator (tools, structured
    output on the provider's side) rather than any generator.
    """

    #: True: the judge model must support chat (``Generator.require_chat``); a plain generator is a ConfigError.
    requires_chat: ClassVar[bool] = False
    _judge_model: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = getattr(getattr(cls, "Options", None), "model_fields", {})
        missing = [name for name in ("generator", "params", "prompt_version") if name not in fields]
        if missing:
            raise TypeError(
                f"{cls.__name__}.Options lacks {', '.join(missing)}: an LLMJudging component's options subclass "
                "ragassay.llm.JudgeOptions (generator, params) and add a prompt_version"
            )

    def judge_model(self) -> Any:
        """The judge generator, built once from ``options.generator`` (one client, one response cache)."""
        if self._judge_model is None:
            model = self.context.build(self.options.generator)
            self._judge_model = model.require_chat(f"{self.kind} {self.name}") if self.requires_chat else model
        return self._judge_model

    def prompt_text(self) -> str:
        """The prompt template and anything else that shapes the request (part of the identity's digest)."""
        return ""

    @property
    def identity(self) -> str:
        """``name:generator:prompt_version:digest``; the digest covers the generator's options, the decoding
        parameters and :meth:`prompt_text`. Use it as a judgement's ``judge_id`` (or a metric's ``judge`` detail)."""
        o = self.options
        shaped = {"generator": o.generator.options, "params": o.params, "prompt": self.prompt_text()}
        digest = hashlib.sha256(json.dumps(shaped, sort_keys=True, default=str).encode()).hexdigest()[:8]
        return f"{self.name}:{o.generator.name}:{o.prompt_version}:{digest}"

    async def ask(self, messages: Sequence[dict[str, Any]], response_model: type[BaseModel]) -> JudgeReply:
        """Ask the judge model for a ``response_model`` object (explanation first) through
        :func:`ragassay.llm.ask_structured`, with ``options.params``. ``reply.parsed`` is the validated object,
        or None (then ``reply.raw`` and ``reply.error`` say why: pass the reply to :meth:`unusable`)."""
        messages = with_exemplars(messages, self.options.exemplars)
        return await ask_structured(self.judge_model(), messages, response_model, params=self.options.params)

    async def ask_text(self, messages: Sequence[dict[str, Any]], choices: Sequence[str]) -> JudgeReply:
        """A free-text reply whose first whole-word verdict among ``choices`` decides (``parsed`` is that word,
        lower-cased; ``raw`` the reply); re-asked with a corrective message while the reply has none."""
        generator, asked, raw = self.judge_model(), with_exemplars(messages, self.options.exemplars), ""
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

    async def ask_once(self, prompt: str, response_model: type[BaseModel], what: str = "judge reply") -> tuple:
        """Ask one user ``prompt`` for a ``response_model`` object (:meth:`ask`): ``(the validated object, None)``,
        or ``(None, Unscored)`` when the judge model failed (the provider's error) or gave no usable reply after the
        bounded re-asks (:meth:`unusable`: the raw reply kept), never a guessed value."""
        try:
            reply = await self.ask([{"role": "user", "content": prompt}], response_model)
        except ProviderError as exc:
            return None, Unscored(
                reason=f"{what}: the judge model failed: {exc}", details={"raw": "", "judge": self.identity}
            )
        if reply.parsed is None:
            return None, self.unusable(reply, what)
        return reply.parsed, None

    def unusable(self, reply: JudgeReply, what: str = "judge reply") -> Unscored:
        """Unscored for a reply without a usable verdict: the reason ``"<what> not usable: <error>"``, the raw reply,
        the error and the judge's identity in the details (never a guessed value)."""
        return Unscored(
            reason=f"{what} not usable: {reply.error}",
            details={"raw": reply.raw, "error": reply.error, "judge": self.identity},
        )
