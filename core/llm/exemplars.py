"""Labelled exemplars in a judge's prompt: items people judged, shown to the judge model before the item to judge
(few-shot prompting, Brown et al. 2020, "Language models are few-shot learners"; ``ragassay align`` chooses them).

Every judge built on :class:`ragassay.llm.LLMJudging` takes them through its options (``exemplars`` of
:class:`ragassay.llm.JudgeOptions`): the base puts :func:`render_exemplars` before the first user message of every
request (:func:`with_exemplars`), so a judge needs no code of its own. Exemplars change the prompt, so they change
the prompt version: with exemplars a judge's ``prompt_version`` is ``<its version>+ex-<digest>``, the digest
being the first 8 hex digits of the SHA-256 of the exemplars' canonical JSON (:func:`exemplar_version`); a config
that names another version is an error, so stored results of one set of exemplars are never read as another's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SEPARATOR = "+ex-"
HEADER = "Examples that people judged (judge the new item the way they did):"


class Exemplar(BaseModel):
    """One item people judged, as the judge model sees it before the item to judge."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The question.")
    answer: str = Field(description="The answer that was judged.")
    reference: str | None = Field(None, description="The reference answer(s), when the judge compares with them.")
    contexts: list[str] = Field(default_factory=list, description="Retrieved contexts, when the judge reads them.")
    verdict: str = Field(description="The verdict people gave, in the judge's words (e.g. correct or incorrect).")
    note: str | None = Field(None, description="Why, when the labeller said so.")


def exemplar_digest(exemplars: Sequence[Exemplar]) -> str:
    """The first 8 hex digits of the SHA-256 of the exemplars' canonical JSON (order matters)."""
    canonical = json.dumps([e.model_dump() for e in exemplars], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:8]


def exemplar_version(base: str, exemplars: Sequence[Exemplar]) -> str:
    """``base`` for no exemplars, else ``base+ex-<digest>``."""
    return f"{base}{SEPARATOR}{exemplar_digest(exemplars)}" if exemplars else base


def base_version(version: Any) -> Any:
    """The judge's own prompt version of a (possibly exemplar-derived) version."""
    return version.split(SEPARATOR)[0] if isinstance(version, str) else version


def render_exemplars(exemplars: Sequence[Exemplar]) -> str:
    """The exemplar block put before the item to judge."""
    parts = [HEADER]
    for number, e in enumerate(exemplars, 1):
        lines = [f"### Example {number}", f"Question: {e.question}"]
        if e.reference is not None:
            lines.append(f"Reference answer: {e.reference}")
        lines += [f"Context {i}: {c}" for i, c in enumerate(e.contexts, 1)]
        lines += [f"Answer: {e.answer}", f"People's verdict: {e.verdict}"]
        if e.note:
            lines.append(f"Why: {e.note}")
        parts.append("\n".join(lines))
    parts.append("### The item to judge")
    return "\n\n".join(parts)


def with_exemplars(messages: Sequence[dict[str, Any]], exemplars: Sequence[Exemplar]) -> list[dict[str, Any]]:
    """``messages`` with the exemplar block before the first user message's text (unchanged without exemplars)."""
    out = [dict(m) for m in messages]
    if not exemplars:
        return out
    for message in out:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            message["content"] = f"{render_exemplars(exemplars)}\n\n{message['content']}"
            return out
    return [{"role": "user", "content": render_exemplars(exemplars)}, *out]
