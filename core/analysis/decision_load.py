"""Reading a stored run for retrieval-decision scoring (``ragassay decisions``): outcomes and system roles."""

from __future__ import annotations

import json

from ..errors import StoreError
from ..store.database import ResultsStore
from .comparison import per_sample_values
from .retrieval_decision import DecisionOutcome


def system_rags(store: ResultsStore, run_id: str) -> dict[str, str]:
    """system name -> name of its RAG component (``naive``, ``no_retrieval``, ...)."""
    return {s["name"]: json.loads(s["spec_json"])["rag"]["name"] for s in store.run_systems(run_id)}


def pick_system(rags: dict[str, str], rag: str, flag: str) -> str:
    """The one system whose RAG is ``rag``; otherwise a StoreError telling the user to name it with ``flag``."""
    found = [name for name, kind in rags.items() if kind == rag]
    if len(found) != 1:
        raise StoreError(f"cannot tell which system is the '{rag}' one ({', '.join(found) or 'none'}); use {flag}")
    return found[0]


def decision_outcomes(
    store: ResultsStore, run_id: str, column: str | None, threshold: float
) -> tuple[dict[str, dict[str, DecisionOutcome]], str]:
    """system -> question_id -> :class:`DecisionOutcome`, and the correctness column used.

    ``column`` is a metric or ``judge:NAME`` (default: the run's first judge); a value >= ``threshold`` is
    correct.
    """
    values = per_sample_values(store, run_id)
    if column is None:
        judges = [c for (_, c) in values if c.startswith("judge:")]
        if not judges:
            raise StoreError("the run has no judge; name a metric with --correct (and a --threshold)")
        column = judges[0]
    outcomes: dict[str, dict[str, DecisionOutcome]] = {}
    for system, qid, output in store.output_payloads(run_id):
        value = values.get((system, column), {}).get(qid)
        outcomes.setdefault(system, {})[qid] = DecisionOutcome(
            correct=None if value is None else float(value >= threshold),
            retrieved=output.retrieved,
            tokens=output.usage.input_tokens + output.usage.output_tokens,
        )
    return outcomes, column
