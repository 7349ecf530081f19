"""``ragassay decisions`` over the read model: each agent's retrieve-or-not decisions scored against the samples
the no-retrieval baseline got wrong (:mod:`.retrieval_decision`).

The systems are found by the role their RAG declares (``RAGSystem.retrieval``, stored with the run): the one that
never retrieves is the baseline, the one that always retrieves the naive system, and the agents are those that
skipped retrieval at least once; ``--baseline``, ``--naive`` and ``--agent`` name them instead.
"""

from __future__ import annotations

import dataclasses
import math

from ..errors import StoreError
from .retrieval_decision import DecisionOutcome, DecisionReport, score_decisions


@dataclasses.dataclass(frozen=True)
class Decisions:
    """The decision reports of a run's agents, and what they were scored against."""

    run_id: str
    column: str
    threshold: float
    baseline: str
    naive: str
    reports: list[DecisionReport]


def system_roles(run) -> dict[str, str | None]:
    """system name -> how its RAG uses retrieval, as stored with the run: always, never, decides (or None)."""
    return {system: run.retrieval_role(system) for system in run.systems}


def pick_system(roles: dict[str, str | None], role: str, flag: str) -> str:
    """The one system whose RAG retrieves ``role``; otherwise a StoreError telling the user to name it with
    ``flag``."""
    found = [name for name, found_role in roles.items() if found_role == role]
    if len(found) != 1:
        what = {"never": "answers without retrieval", "always": "always retrieves"}[role]
        raise StoreError(
            f"cannot tell which system {what} ({', '.join(found) or 'none declares it'}); name it with {flag}"
        )
    return found[0]


def decision_outcomes(run, column: str | None, threshold: float) -> tuple[dict[str, dict[str, DecisionOutcome]], str]:
    """system -> question_id -> :class:`DecisionOutcome` (ok outputs), and the correctness column used.

    ``column`` is a metric or ``judge:NAME`` (default: the run's first judge); a value >= ``threshold`` is correct.
    """
    if column is None:
        if not run.judges:
            raise StoreError("the run has no judge; name a metric with --correct (and a --threshold)")
        column = f"judge:{run.judges[0]}"
    outcomes: dict[str, dict[str, DecisionOutcome]] = {}
    for system in run.systems:
        values = run.values(system, column)
        for qid, value in zip(run.question_ids, values):
            output = run.output(system, qid)
            if output is None or not output.ok:
                continue
            outcomes.setdefault(system, {})[qid] = DecisionOutcome(
                correct=None if math.isnan(value) else float(value >= threshold),
                retrieved=output.retrieved,
                tokens=output.usage.input_tokens + output.usage.output_tokens,
            )
    return outcomes, column


def decisions(
    run,
    *,
    agents: tuple[str, ...] = (),
    baseline: str | None = None,
    naive: str | None = None,
    column: str | None = None,
    threshold: float = 0.5,
) -> Decisions:
    """Score the decisions of ``agents`` (default: every system that skipped retrieval at least once)."""
    roles = system_roles(run)
    outcomes, column = decision_outcomes(run, column, threshold)
    baseline = baseline or pick_system(roles, "never", "--baseline")
    naive = naive or pick_system(roles, "always", "--naive")
    agents = agents or tuple(
        s for s, o in outcomes.items() if s not in (baseline, naive) and any(x.retrieved is False for x in o.values())
    )
    reports = []
    for agent in agents:
        if agent not in roles:
            raise StoreError(f"run {run.id[:12]} has no system '{agent}'. Systems: {', '.join(roles)}")
        reports.append(
            score_decisions(
                outcomes.get(agent, {}), outcomes.get(baseline, {}), outcomes.get(naive, {}), (agent, baseline, naive)
            )
        )
    return Decisions(run.id, column, threshold, baseline, naive, reports)
