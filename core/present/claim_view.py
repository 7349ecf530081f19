"""Claim-level diagnosis of one output for ``ragassay show`` and the HTML report, read from stored details.

A claim metric (the ``claims`` plugin's ``rc_*``, or any metric storing the same layout) keeps the claims of the
response and of the reference answer and every check in its details under ``checks``, in RAGChecker's layout
(docs/judges.md, "Claim checks")::

    {"response_claims": [...], "gt_answer_claims": [...], "chunk_ids": [...],
     "answer2response": [label per response claim] | null, "response2answer": [label per reference claim] | null,
     "retrieved2response": [[label per chunk] per response claim] | null,
     "retrieved2answer": [[label per chunk] per reference claim] | null}

with labels ``Entailment`` / ``Neutral`` / ``Contradiction``. This module reads that layout as plain JSON (core
never imports a plugin) and marks each claim as RAGChecker's Figure 1 does:

- a reference claim is ``used`` (the response entails it) and/or ``retrieved`` (a chunk entails it), else
  ``missed``;
- a response claim is ``entailed`` (correct, and a chunk entails it), ``self-knowledge`` (correct, no chunk
  entails it), ``hallucinated`` (incorrect, no chunk) or ``noise`` (incorrect, yet a chunk entails it); with a
  check list missing, what is known (``correct`` / ``incorrect``, ``grounded`` / ``ungrounded``, ``unchecked``).

Each claim comes with the id of the first chunk that entails it (None when none does).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ENTAILMENT = "Entailment"
#: The tone of each mark: good, warn (not wrong, worth a look) or bad.
TONES = {
    "entailed": "good",
    "retrieved, used": "good",
    "correct": "good",
    "grounded": "good",
    "self-knowledge": "warn",
    "retrieved, not used": "warn",
    "used, not retrieved": "warn",
    "unchecked": "warn",
    "retrieved": "good",
    "used": "good",
    "not retrieved": "bad",
    "not used": "bad",
    "hallucinated": "bad",
    "noise": "bad",
    "missed": "bad",
    "incorrect": "bad",
    "ungrounded": "bad",
}


def claim_text(claim: Any) -> str:
    """A claim as text: a sentence as is, a triplet as ``(subject; predicate; object)``."""
    return claim if isinstance(claim, str) else "(" + "; ".join(str(part) for part in claim) + ")"


def find_checks(details: Iterable[tuple[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """The first ``(label, checks)`` among ``(metric label, details)`` pairs whose details hold claim checks."""
    for label, detail in details:
        checks = detail.get("checks") if isinstance(detail, dict) else None
        if isinstance(checks, dict) and isinstance(checks.get("response_claims"), list):
            return label, checks
    return None


def claim_view(checks: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``{"reference": [...], "response": [...]}``: per claim its ``text``, ``mark``, ``tone``, ``chunk`` (the
    first chunk id that entails it, or None) and ``label`` (its label against the other text, or None)."""
    ids = [str(i) for i in checks.get("chunk_ids") or []]
    reference = [
        _reference(claim, _at(checks.get("response2answer"), j), _at(checks.get("retrieved2answer"), j), ids)
        for j, claim in enumerate(checks.get("gt_answer_claims") or [])
    ]
    response = [
        _response(claim, _at(checks.get("answer2response"), i), _at(checks.get("retrieved2response"), i), ids)
        for i, claim in enumerate(checks.get("response_claims") or [])
    ]
    return {"reference": reference, "response": response}


def _at(labels: list | None, index: int) -> Any:
    return labels[index] if isinstance(labels, list) and index < len(labels) else None


def _supporting(row: list | None, ids: list[str]) -> tuple[bool | None, str | None]:
    """(some chunk entails, the first such chunk's id); (None, None) when the row was not checked."""
    if not isinstance(row, list):
        return None, None
    for c, label in enumerate(row):
        if label == ENTAILMENT:
            return True, ids[c] if c < len(ids) else str(c)
    return False, None


def _entry(claim: Any, mark: str, chunk: str | None, label: str | None) -> dict[str, Any]:
    return {"text": claim_text(claim), "mark": mark, "tone": TONES[mark], "chunk": chunk, "label": label}


def _reference(claim: Any, label: str | None, row: list | None, ids: list[str]) -> dict[str, Any]:
    retrieved, chunk = _supporting(row, ids)
    used = None if label is None else label == ENTAILMENT
    if used is None:
        mark = "unchecked" if retrieved is None else "retrieved" if retrieved else "not retrieved"
    elif retrieved is None:
        mark = "used" if used else "not used"
    elif retrieved:
        mark = "retrieved, used" if used else "retrieved, not used"
    else:
        mark = "used, not retrieved" if used else "missed"
    return _entry(claim, mark, chunk, label)


def _response(claim: Any, label: str | None, row: list | None, ids: list[str]) -> dict[str, Any]:
    grounded, chunk = _supporting(row, ids)
    correct = None if label is None else label == ENTAILMENT
    if correct is None:
        mark = "unchecked" if grounded is None else "grounded" if grounded else "ungrounded"
    elif grounded is None:
        mark = "correct" if correct else "incorrect"
    elif correct:
        mark = "entailed" if grounded else "self-knowledge"
    else:
        mark = "noise" if grounded else "hallucinated"
    return _entry(claim, mark, chunk, label)
