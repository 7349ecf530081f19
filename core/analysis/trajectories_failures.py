"""Where trajectories fail, per system: the blamed step's kind and hop, and the first hop no retrieval found.

- **Blame** (:func:`blame_summaries`) comes from the step-blame metrics (docs/metrics.md): ``step_blame`` (exact,
  from per-hop gold) and ``step_blame_judge`` (a judge, for samples without hops), found by label or stored
  component name. Each stores value 1 when the trajectory went right, else 0, with details ``{"blame": "ok" |
  "wrong_tool" | "missed_hop" | ..., "step", "step_index", "kind", "hop", "reason"}``. A sample takes the first
  blame column that scored it, exact before judge; per system it counts the failed samples by blame, by the
  blamed step's kind and by hop (``(none)`` where the details name none), with the failed share and its interval.
- **Hops** (:func:`hop_summaries`) come from the per-hop metrics (``hop_coverage``, ``hop_recall``,
  ``hop_precision``, ``hop_mrr``: the first the run has), whose details hold ``hops`` (each with ``index`` and
  ``found``) and ``first_failed_hop``: per system, how many samples first failed at each hop (``none``: every hop
  found), and per hop index the share of samples holding that hop whose gold some retrieval found, with intervals.

Intervals are those of :mod:`.trajectories` (cluster bootstrap: a conversation's turns resampled together).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .conversations_answerability import metric_columns
from .trajectories import DEFAULT_RESAMPLES, Estimate, estimate

BLAME_METRICS = ("step_blame", "step_blame_judge")  # exact first
HOP_METRICS = ("hop_coverage", "hop_recall", "hop_precision", "hop_mrr")
NONE = "(none)"  # a blame whose details name no step kind or hop
ALL_FOUND = "none"  # the first failed hop of a sample whose every hop was found


@dataclasses.dataclass(frozen=True)
class BlameSummary:
    """One system's blamed trajectories: judged samples, failed ones by blame, step kind and hop, the blame
    columns that judged them (label -> samples) and the failed share."""

    system: str
    judged: int
    failed: int
    by_blame: dict[str, int]
    by_kind: dict[str, int]
    by_hop: dict[str, int]
    sources: dict[str, int]
    failed_share: Estimate


@dataclasses.dataclass(frozen=True)
class HopSummary:
    """One system's hops: samples with hop details, the first failed hop of each counted (``"1"``, ``"2"``, ...,
    ``"none"``), and per hop index the share of samples whose gold for that hop was found."""

    system: str
    metric: str
    samples: int
    first_failed: dict[str, int]
    found: dict[int, Estimate]


def blame_columns(run) -> list[str]:
    """The run's step-blame metric labels: every ``step_blame`` column, then every ``step_blame_judge`` one."""
    return [label for name in BLAME_METRICS for label in metric_columns(run, name)]


def hop_column(run) -> str | None:
    """The run's per-hop metric label whose details are read (the first of :data:`HOP_METRICS` it has)."""
    for name in HOP_METRICS:
        found = metric_columns(run, name)
        if found:
            return found[0]
    return None


def _details(run, label: str) -> dict[tuple[str, str], tuple[float, dict]]:
    """(system, question_id) -> (value, details) of ``label``'s scored values (repeat 0)."""
    return {
        (r.system, r.question_id): (r.value, r.details if isinstance(r.details, dict) else {})
        for r in run.records(kind="metric", label=label, repeat=0)
        if r.value is not None
    }


def blame_summaries(run, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> list[BlameSummary]:
    """Per system of ``run`` (run order), its :class:`BlameSummary`; empty when the run has no blame column."""
    columns = blame_columns(run)
    if not columns:
        return []
    stored = {label: _details(run, label) for label in columns}
    found = []
    for system in run.systems:
        failed = np.full(len(run.question_ids), np.nan)
        by_blame, by_kind, by_hop, sources = {}, {}, {}, {}
        for i, q in enumerate(run.question_ids):
            label = next((c for c in columns if (system, q) in stored[c]), None)
            if label is None:
                continue
            value, details = stored[label][(system, q)]
            sources[label] = sources.get(label, 0) + 1
            failed[i] = 1.0 if value < 1.0 else 0.0
            if value < 1.0:
                _count(by_blame, str(details.get("blame") or "failed"))
                _count(by_kind, str(details.get("kind") or NONE))
                hop = details.get("hop")
                _count(by_hop, NONE if hop is None else f"hop {hop}")
        share = estimate(failed, run.clusters, n_resamples=n_resamples, seed=seed)
        judged = int((~np.isnan(failed)).sum())
        found.append(
            BlameSummary(
                system, judged, int(np.nansum(failed)), by_blame, by_kind, _hops_sorted(by_hop), sources, share
            )
        )
    return found


def _count(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def _hops_sorted(counts: dict[str, int]) -> dict[str, int]:
    def key(name: str):
        number = name.removeprefix("hop ")
        return (0, int(number), "") if number.isdigit() else (1, 0, name)

    return {name: counts[name] for name in sorted(counts, key=key)}


def hop_summaries(run, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> list[HopSummary]:
    """Per system of ``run`` (run order) with a hop value, its :class:`HopSummary`; empty without a hop column."""
    label = hop_column(run)
    if label is None:
        return []
    stored = _details(run, label)
    found = []
    for system in run.systems:
        mine = [(i, stored[(system, q)][1]) for i, q in enumerate(run.question_ids) if (system, q) in stored]
        if not mine:
            continue
        first: dict[str, int] = {}
        hop_found: dict[int, np.ndarray] = {}
        for i, details in mine:
            failed_at = details.get("first_failed_hop")
            _count(first, ALL_FOUND if failed_at is None else str(failed_at))
            for hop in details.get("hops") or []:
                if isinstance(hop, dict) and isinstance(hop.get("index"), int):
                    column = hop_found.setdefault(hop["index"], np.full(len(run.question_ids), np.nan))
                    column[i] = 1.0 if hop.get("found") else 0.0
        order = sorted((k for k in first if k != ALL_FOUND), key=int) + ([ALL_FOUND] if ALL_FOUND in first else [])
        shares = {
            index: estimate(hop_found[index], run.clusters, n_resamples=n_resamples, seed=seed)
            for index in sorted(hop_found)
        }
        found.append(HopSummary(system, label, len(mine), {k: first[k] for k in order}, shares))
    return found
