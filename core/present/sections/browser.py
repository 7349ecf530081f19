"""The failure browser's data: the worst samples of each system with everything needed to see why.

Which samples: per system, the :data:`WORST_PER_SYSTEM` samples with the worst mean rank over the metric and
judge columns (:func:`ragassay.analysis.worst.worst_samples`). Their union is embedded, with every system's output
for each, so the page stays small for any run size; the page says how many of how many samples it shows.

Per sample: the question, reference answers and reference context ids; per system the answer (or the
error), the retrieved contexts with their ids (those among the reference ids marked), metric values (or why
unscored), judge verdicts with explanations, groundedness segment verdicts from metric or judge details, and the
claims of the reference answer and the response marked as RAGChecker marks them, with the chunk that supports
each (from claim checks stored by a claim metric, :mod:`ragassay.present.claim_view`).
"""

from __future__ import annotations

from typing import Any

WORST_PER_SYSTEM = 25
CONTEXT_CHARS = 600  # each context's text is cut to this many characters


def sample_entry(run, sample, payloads: dict, scores: list) -> dict[str, Any]:
    """One sample of the browser: its stored outputs (``payloads``: (system, question_id) -> output) and its
    repeat-0 ``scores``, systems in run order; a conversation's turn names its conversation and turn."""
    references = set(sample.reference_context_ids)
    turn = {"conversation": {"id": sample.conversation_id, "turn": sample.turn}} if sample.conversation_id else {}
    return {
        **turn,
        "id": sample.question_id,
        "question": sample.question,
        "references": list(sample.reference_answers),
        "reference_ids": list(sample.reference_context_ids),
        "systems": [
            _system_entry(
                system,
                run.output(system, sample.question_id),
                payloads.get((system, sample.question_id)),
                [s for s in scores if s.system == system],
                references,
            )
            for system in run.systems
        ],
    }


def _system_entry(system: str, row, output, scores: list, references: set[str]) -> dict[str, Any]:
    if row is None:
        return {
            "system": system,
            "status": "missing",
            "answer": "",
            "error": "no stored output",
            "contexts": [],
            "metrics": [],
            "judgements": [],
            "claims": None,
        }
    contexts = []
    if output is not None:
        documents = output.context_document_ids or [""] * len(output.contexts)
        ids = output.context_ids or [""] * len(output.contexts)
        for text, cid, doc in zip(output.contexts, ids, documents):
            contexts.append(
                {
                    "id": cid,
                    "document": doc,
                    "reference": cid in references or doc in references,
                    "text": text[:CONTEXT_CHARS] + ("..." if len(text) > CONTEXT_CHARS else ""),
                }
            )
    return {
        "system": system,
        "status": row.status,
        "answer": output.answer if output is not None else "",
        "error": row.error or "",
        "contexts": contexts,
        "metrics": [_value(s) for s in scores if s.kind == "metric"],
        "judgements": [_value(s) for s in scores if s.kind == "judge"],
        "claims": _claims(scores),
    }


def _claims(scores: list) -> dict[str, Any] | None:
    """The claim view (:mod:`ragassay.present.claim_view`) of the first metric that stores claim checks, or None."""
    from ..claim_view import claim_view, find_checks

    found = find_checks((s.column, s.details) for s in scores if s.kind == "metric")
    if found is None:
        return None
    return {"metric": found[0], **claim_view(found[1])}


def _value(score) -> dict[str, Any]:
    details = score.details
    return {
        "name": score.column,
        "value": score.value,
        "reason": (score.unscored_reason or "") if score.kind == "metric" else "",
        "verdict": score.verdict or ("unscored" if score.value is None else ""),
        "explanation": score.explanation or "",
        "segments": [
            {"text": str(s.get("text", "")), "correct": s.get("correct"), "explanation": str(s.get("explanation", ""))}
            for s in details.get("segments", [])
            if isinstance(s, dict)
        ]
        if isinstance(details, dict)
        else [],
    }
