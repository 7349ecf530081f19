"""Turning what a user's system returned into a :class:`RAGOutput`, with clear errors."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ragassay import RAGOutput, steps_from_dicts, text_bytes

MIB = 1024 * 1024

#: Accepted field names (Unitxt's seed document spells the ids 'contexts_id', its task layout 'contexts_ids').
ALIASES = {
    "contexts_id": "context_ids",
    "contexts_ids": "context_ids",
    "context_ids": "context_ids",
    "contexts": "contexts",
    "answer": "answer",
    "context_document_ids": "context_document_ids",
    "retrieved": "retrieved",
    "query": "query",
    "trajectory": "trajectory",
}


class OutputTooLarge(ValueError):
    """A system returned more text than its adapter's ``max_bytes``: the unit fails, nothing of it is stored."""


def check_size(output: RAGOutput, limit: int, where: str) -> RAGOutput:
    """``output`` unchanged, or OutputTooLarge when its answer, contexts, ids, trace and trajectory hold over
    ``limit`` bytes."""
    texts = [output.answer, *output.contexts, *output.context_ids, *output.context_document_ids]
    if output.trace:
        texts.append(json.dumps(output.trace, ensure_ascii=False, default=str))
    if output.trajectory:
        texts.append(json.dumps([s.model_dump(exclude_defaults=True) for s in output.trajectory], default=str))
    size = text_bytes(texts, limit)
    if size > limit:
        raise OutputTooLarge(
            f"{where} returned {size / MIB:.1f} MiB or more of text (answer, contexts, ids, trace, trajectory), over "
            "max_bytes = "
            f"{limit:,} ({limit / MIB:g} MiB); nothing of it was stored. Return less, or raise the adapter's max_bytes"
        )
    return output


def to_output(value: Any, where: str) -> RAGOutput:
    """Accept a RAGOutput, a string (the answer) or a mapping with answer/contexts/context ids (and ``query``: the
    retrieval query a conversational system sent, e.g. its rewrite of the turn; ``trajectory``: an agent's steps,
    a list of step objects validated by :func:`ragassay.steps_from_dicts`)."""
    if isinstance(value, RAGOutput):
        steps_from_dicts(value.trajectory, where)  # ids unique, parents earlier agent steps
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
    if fields.get("query") is not None:
        fields["query"] = str(fields["query"])
    for key in ("contexts", "context_ids", "context_document_ids"):
        if key in fields:
            fields[key] = [str(item) for item in (fields[key] or [])]
    if "trajectory" in fields:
        fields["trajectory"] = steps_from_dicts(fields["trajectory"], where)
    if fields.get("contexts") or fields.get("context_ids"):
        fields.setdefault("retrieved", True)
    try:
        return RAGOutput(**fields)
    except ValidationError as exc:
        raise ValueError(f"{where} returned an invalid output: {exc.errors()[0]['msg']}") from None
