"""Turning what a user's system returned into a :class:`RAGOutput`, with clear errors."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ragassay import RAGOutput

#: Accepted field names (Unitxt's seed document spells the ids 'contexts_id', its task layout 'contexts_ids').
ALIASES = {
    "contexts_id": "context_ids",
    "contexts_ids": "context_ids",
    "context_ids": "context_ids",
    "contexts": "contexts",
    "answer": "answer",
    "context_document_ids": "context_document_ids",
    "retrieved": "retrieved",
}


def to_output(value: Any, where: str) -> RAGOutput:
    """Accept a RAGOutput, a string (the answer) or a mapping with answer/contexts/context ids."""
    if isinstance(value, RAGOutput):
        return value
    if isinstance(value, str):
        return RAGOutput(answer=value)
    if not isinstance(value, dict):
        raise TypeError(
            f"{where} returned {type(value).__name__}; return a str, a dict with 'answer' "
            "(and optionally 'contexts', 'context_ids'), or a ragassay.RAGOutput"
        )
    if "answer" not in value:
        raise ValueError(f"{where} returned no 'answer' (keys: {', '.join(map(str, value)) or 'none'})")
    fields = {ALIASES[k]: v for k, v in value.items() if k in ALIASES}
    fields["answer"] = "" if fields["answer"] is None else str(fields["answer"])
    for key in ("contexts", "context_ids", "context_document_ids"):
        if key in fields:
            fields[key] = [str(item) for item in (fields[key] or [])]
    if fields.get("contexts") or fields.get("context_ids"):
        fields.setdefault("retrieved", True)
    try:
        return RAGOutput(**fields)
    except ValidationError as exc:
        raise ValueError(f"{where} returned an invalid output: {exc.errors()[0]['msg']}") from None
