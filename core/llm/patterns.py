"""Building blocks of :meth:`Component.call_pattern <ragassay.Component.call_pattern>` hooks (``ragassay estimate``).

A hook says which model calls a component makes for one sample, from the prompts it would send, filled with
the sample and with the run-time texts that are not known before the run (the answer, the retrieved contexts)
assumed as :class:`~ragassay.models.Hints` says. :func:`asks` counts the asks of a judge or LLM metric the way
:mod:`ragassay.llm.judging` makes them (structured output: the schema is sent too; corrective re-asks are the
range's upper end); :func:`answer_text` and :func:`context_texts` are the assumed run-time texts::

    def call_pattern(self, sample, hints):
        prompt = fill(PROMPT, {"question": sample.question, "answer": answer_text(hints)})
        return asks(self.judge_model(), [prompt], Verdict)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

#: A run of this many or more "x": a text assumed by :func:`answer_text` / :func:`context_texts` (or a part of a
#: prompt only its length is known of). A tokenizer counts it as characters / 4 (:func:`split_assumed`).
ASSUMED = re.compile("x{16,}")


def split_assumed(text: str) -> tuple[str, int]:
    """``text`` without its assumed parts (runs of :data:`ASSUMED`), and their tokens at characters / 4: what a
    :meth:`~ragassay.llm.LLMGenerator.token_counter` tokenizes, and what it adds (the content is unknown)."""
    from .budget import CHARS_PER_TOKEN

    assumed = sum(len(m) for m in ASSUMED.findall(text))
    return ASSUMED.sub("", text), math.ceil(assumed / CHARS_PER_TOKEN)


def answer_text(hints: Any) -> str:
    """The assumed answer: ``hints.answer_chars`` characters (the content is not known before the run)."""
    return "x" * hints.answer_chars


def context_texts(sample: Any, hints: Any) -> list[str] | None:
    """The assumed retrieved contexts: ``hints.contexts`` texts of ``hints.context_chars`` characters in all;
    the sample's reference contexts when the system's retrieval is not known; None when neither is; [] for a
    system that never retrieves."""
    if hints.contexts == 0:
        return []
    if hints.context_chars is not None:
        count = max(1, hints.contexts or 1)
        return ["x" * (hints.context_chars // count)] * count
    if sample.reference_contexts:
        return list(sample.reference_contexts)
    return None


def message_chars(messages: Sequence[dict[str, Any]]) -> int:
    """Characters of the messages' contents."""
    return sum(len(str(m.get("content") or "")) for m in messages)


def asks(
    generator: Any,
    prompts: Sequence[str],
    response_model: type[BaseModel] | None = None,
    *,
    retries: int | None = None,
    extra_chars: int = 0,
    note: str = "",
) -> Any:
    """A :class:`~ragassay.models.CallPattern` of one ask per prompt to ``generator`` (None when it cannot say:
    a generator that is not an :class:`~ragassay.llm.LLMGenerator`).

    With a ``response_model`` (structured output, :func:`ragassay.llm.ask_structured`) each ask sends the schema
    and may be re-asked ``structured_retries`` times (a plain generator: :data:`ragassay.llm.judging.RETRIES`); a
    free-text verdict (:meth:`LLMJudging.ask_text`) passes ``retries=TEXT_RETRIES``. ``extra_chars``: characters
    every ask sends besides the prompt (e.g. a system message); a generator that counts tokens with its model's
    tokenizer counts the prompts with it and these characters as characters / 4."""
    from .judging import RETRIES

    if not hasattr(generator, "calls"):
        return None
    per_ask = extra_chars
    if response_model is not None:
        per_ask += len(json.dumps(response_model.model_json_schema()))
        if retries is None:
            chat = getattr(type(generator), "supports_chat", False)
            retries = generator.options.structured_retries if chat else RETRIES
    chars = sum(len(p) for p in prompts) + per_ask * len(prompts)
    extra = [{"role": "system", "content": "x" * per_ask}] if per_ask else []  # schema etc.: characters / 4
    messages = [[*extra, {"role": "user", "content": p}] for p in prompts]
    return generator.calls(chars, len(prompts), len(prompts) * (1 + (retries or 0)), note, messages=messages)


def unbounded(pattern: Any, note: str) -> Any:
    """``pattern`` with no known upper end (the count depends on content: claims, statements, segments)."""
    if pattern is not None:
        pattern.calls_high = None
        pattern.note = note
    return pattern
