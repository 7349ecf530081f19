"""Asking a model for a validated verdict: explanation first, then the verdict; bounded retries; never a guess.

Every LLM judge and LLM-based metric goes through :func:`ask_structured`::

    class Verdict(BaseModel):
        explanation: str = Field(description="Why, before the verdict.")
        correct: bool = Field(description="The verdict.")

    reply = await ask_structured(generator, messages, Verdict)
    if reply.parsed is None:
        return Unscored(reason=f"judge reply not usable: {reply.error}", details={"raw": reply.raw})

A generator that declares chat (``supports_chat``, every ``ragassay.llm`` backend) is asked with the pydantic
schema as structured output; a plain generator gets the schema in the prompt and its text reply is parsed. Either
way an unparseable or invalid reply is re-asked with the validation error a bounded number of times, then the
reply is returned unparsed with the error (the caller stores it as unscored with the raw reply: never guessed,
never NaN). Model calls are counted as the evaluation's own cost by the runner (:mod:`ragassay.llm.meter`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ..errors import ProviderError

#: Corrective re-asks after the first reply (so at most 1 + RETRIES replies per question).
RETRIES = 2


@dataclasses.dataclass
class JudgeReply:
    """A judge's reply: the validated object, or None with the error; the raw text in both cases."""

    parsed: Any
    raw: str
    error: str | None = None


async def ask_structured(
    generator: Any,
    messages: Sequence[dict[str, Any]],
    response_model: type[BaseModel],
    *,
    params: dict[str, Any] | None = None,
    sample_index: int = 0,
    retries: int = RETRIES,
) -> JudgeReply:
    """Ask ``generator`` for a ``response_model`` object (see the module docstring). Provider failures (after
    the backend's own retries) propagate as :class:`ragassay.ProviderError`."""
    if getattr(type(generator), "supports_chat", False):
        try:
            response = await generator.chat(
                list(messages), response_model=response_model, params=params, sample_index=sample_index
            )
        except ProviderError as exc:
            raw = getattr(exc, "raw", None)
            if raw is None:  # a transport failure, not an unusable reply
                raise
            return JudgeReply(None, raw, str(exc))
        return JudgeReply(response.parsed, response.text or "")
    return await _ask_plain(generator, list(messages), response_model, params or {}, retries)


async def _ask_plain(
    generator: Any, messages: list[dict[str, Any]], model: type[BaseModel], params: dict[str, Any], retries: int
) -> JudgeReply:
    from ..components import GenerationRequest
    from .structured import StructuredOutputError, parse_model

    schema = json.dumps(model.model_json_schema())
    asked = [*messages, {"role": "user", "content": f"Reply with one JSON object that matches this schema: {schema}"}]
    raw, error = "", None
    for _ in range(retries + 1):
        question = "\n\n".join(str(m.get("content", "")) for m in asked)
        generation = await generator.generate(GenerationRequest(question=question, messages=asked, params=params))
        raw = generation.text or ""
        try:
            return JudgeReply(parse_model(raw, model), raw)
        except StructuredOutputError as exc:
            error = str(exc)
            asked = [
                *asked,
                {"role": "assistant", "content": raw},
                {"role": "user", "content": f"That reply is not valid: {error}. Reply with the JSON object only."},
            ]
    return JudgeReply(None, raw, f"{error}; gave up after {retries + 1} replies")


def verdict_words(text: str, choices: Sequence[str]) -> list[str]:
    """Every occurrence of one of ``choices`` in ``text`` as a whole word (not inside a longer word, nor joined by
    a hyphen), lower-cased, in order: ``NO`` inside ``NOT`` or ``KNOWN`` is not a verdict.
    ``verdict_words("NOT KNOWN", ["yes", "no"]) == []``."""
    if not choices:
        return []
    alternatives = "|".join(re.escape(c) for c in sorted(choices, key=len, reverse=True))
    pattern = re.compile(r"(?<![\w-])(" + alternatives + r")(?![\w-])", re.IGNORECASE)
    return [found.lower() for found in pattern.findall(text or "")]


def find_verdict(text: str, choices: Sequence[str]) -> str | None:
    """The last whole-word verdict among ``choices`` in ``text`` (see :func:`verdict_words`), or None: with an
    explanation before the verdict, the last occurrence is the verdict. (A prompt that makes the model start
    with the verdict reads the first one: ``verdict_words(...)[0]``.)"""
    found = verdict_words(text, choices)
    return found[-1] if found else None
