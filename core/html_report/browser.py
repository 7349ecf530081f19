"""The failure browser's data: the worst samples of each system with everything needed to see why.

Which samples: per system, the :data:`WORST_PER_SYSTEM` samples with the worst mean rank over the metric and
judge columns (rank 1 = best by the metric's direction; an unscored value ranks last, a failed output too),
ties broken by the dataset order. Their union is embedded, with every system's output for each, so the page
stays small for any run size; the page says how many of how many samples it shows.

Per sample: the question, reference answers and reference context ids; per system the answer (or the
error), the retrieved contexts with their ids (those among the reference ids marked), metric values (or why
unscored), judge verdicts with explanations, and groundedness segment verdicts from metric or judge details.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

WORST_PER_SYSTEM = 25
CONTEXT_CHARS = 600  # each context's text is cut to this many characters


def worst_samples(scores: pd.DataFrame, directions: dict[str, str], order: list[str], n: int) -> list[str]:
    """The union of every system's ``n`` worst question ids, in dataset ``order``."""
    chosen: set[str] = set()
    position = {q: i for i, q in enumerate(order)}
    for system in dict.fromkeys(scores.index.get_level_values(0)):
        table = scores.loc[system]
        if table.shape[1] == 0:
            continue
        ranks = [
            table[c].rank(ascending=directions.get(c, "higher") == "lower", method="average", na_option="bottom")
            for c in table.columns
        ]
        badness = sum(ranks) / len(ranks)
        ranked = sorted(badness.index, key=lambda q: (-float(badness[q]), position.get(q, len(position))))
        chosen.update(ranked[:n])
    return sorted(chosen, key=lambda q: position.get(q, len(position)))


def sample_entry(detail: dict[str, Any], systems: list[str]) -> dict[str, Any]:
    """One sample of the browser from :meth:`ResultsStore.sample_detail`, systems in run order."""
    sample = detail["sample"]
    references = set(sample.reference_context_ids)
    by_system = {o["row"]["system"]: o for o in detail["outputs"]}
    return {
        "id": sample.question_id,
        "question": sample.question,
        "references": list(sample.reference_answers),
        "reference_ids": list(sample.reference_context_ids),
        "systems": [_system_entry(s, by_system.get(s), references) for s in systems],
    }


def _system_entry(system: str, stored: dict[str, Any] | None, references: set[str]) -> dict[str, Any]:
    if stored is None:
        return {
            "system": system,
            "status": "missing",
            "answer": "",
            "error": "no stored output",
            "contexts": [],
            "metrics": [],
            "judgements": [],
        }
    output, row = stored["output"], stored["row"]
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
        "status": row["status"],
        "answer": output.answer if output is not None else "",
        "error": row.get("error") or "",
        "contexts": contexts,
        "metrics": [_value(m, "metric", "value") for m in stored["metrics"]],
        "judgements": [_value(j, "judge", "score") for j in stored["judgements"]],
    }


def _value(row: dict[str, Any], label: str, value: str) -> dict[str, Any]:
    details = row.get("details") or {}
    entry = {
        "name": row[label] if label == "metric" else f"judge:{row[label]}",
        "value": row[value],
        "reason": row.get("unscored_reason") or "",
        "verdict": row.get("verdict") or ("unscored" if row[value] is None else ""),
        "explanation": row.get("explanation") or "",
        "segments": [
            {"text": str(s.get("text", "")), "correct": s.get("correct"), "explanation": str(s.get("explanation", ""))}
            for s in details.get("segments", [])
            if isinstance(s, dict)
        ]
        if isinstance(details, dict)
        else [],
    }
    return entry
