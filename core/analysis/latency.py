"""Latency as a decision metric, and the quality-cost-latency frontier.

**Latency quantiles.** For each system, p50, p95 and p99 of the stored per-output latencies (ok outputs that
report one; ``numpy.quantile``, linear) with 95% percentile-bootstrap intervals
(:func:`ragassay.analysis.bootstrap.quantile_ci`, seeded). The mean difference of per-sample latency between two
systems is decided like any other metric when ``latency_s`` is declared in ``[evaluation] decide``.

**The frontier.** A system is *dominated* when another is at least as good on quality (the mean of one metric,
by its direction), cost per answered sample and median latency, and strictly better on one of them; the frontier
is the systems no other dominates (Pareto optimality). Point estimates: a system just off the frontier may not
be worse beyond noise (see the verdicts). A cost that is unknown (an unpriced model) for any system leaves cost
out of the comparison, and so does a latency no system reports; the result says which dimensions were used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .bootstrap import QuantileInterval, quantile_ci

QUANTILES = (0.5, 0.95, 0.99)
LATENCY = "latency_s"  # the per-sample latency, as a column of [evaluation] decide


@dataclasses.dataclass(frozen=True)
class LatencyStats:
    """One system's latency quantiles (seconds) with their intervals."""

    system: str
    n: int  # ok outputs with a latency
    quantiles: list[QuantileInterval]

    def at(self, q: float) -> QuantileInterval:
        return next(x for x in self.quantiles if x.q == q)


@dataclasses.dataclass(frozen=True)
class FrontierPoint:
    """One system's position: quality, cost per answered sample, median latency; who dominates it."""

    system: str
    quality: float | None
    cost_per_answer: float | None
    latency_p50: float | None
    dominated_by: list[str]

    @property
    def on_frontier(self) -> bool:
        return not self.dominated_by


@dataclasses.dataclass(frozen=True)
class Frontier:
    """The frontier of a run's systems, the quality metric and the dimensions compared."""

    metric: str
    direction: str
    dimensions: list[str]  # of "quality", "cost", "latency"
    points: list[FrontierPoint]
    notes: list[str]

    @property
    def systems(self) -> list[str]:
        """The systems on the frontier, in run order."""
        return [p.system for p in self.points if p.on_frontier]


def latency_stats(run, seed: int = 0) -> list[LatencyStats]:
    """p50/p95/p99 with intervals for each system of ``run`` (:class:`ragassay.results.RunData`)."""
    stats = []
    for system in run.systems:
        values = run.latencies(system)
        stats.append(LatencyStats(system, len(values), quantile_ci(values, QUANTILES, seed=seed)))
    return stats


def latency_column(run, system: str):
    """Per-sample latency of ``system`` in sample order (NaN where the output failed, is missing or reports none):
    the ``latency_s`` column a declared decision family can name."""
    import numpy as np

    outputs = (run.output(system, q) for q in run.question_ids)
    return np.array(
        [o.latency_s if o is not None and o.ok and o.latency_s is not None else np.nan for o in outputs], dtype=float
    )


def frontier(
    systems: Sequence[str],
    quality: dict[str, float | None],
    cost: dict[str, float | None],
    latency: dict[str, float | None],
    *,
    metric: str,
    direction: str = "higher",
) -> Frontier:
    """The systems not dominated on (quality by ``direction``, cost lower, latency lower) (module docstring)."""
    dimensions, notes = ["quality"], []
    if any(cost[s] is None for s in systems):
        notes.append("cost left out: unknown for " + ", ".join(s for s in systems if cost[s] is None))
    else:
        dimensions.append("cost")
    if all(latency[s] is None for s in systems):
        notes.append("latency left out: no system reports one")
    else:
        dimensions.append("latency")
    sign = 1 if direction == "higher" else -1

    def key(system: str) -> list[float]:  # larger is better on every entry
        values = [_score(quality[system], sign)]
        if "cost" in dimensions:
            values.append(-cost[system])
        if "latency" in dimensions:
            values.append(_score(latency[system], -1))
        return values

    points = []
    for system in systems:
        mine = key(system)
        by = [other for other in systems if other != system and _dominates(key(other), mine)]
        points.append(FrontierPoint(system, quality[system], cost[system], latency[system], by))
    return Frontier(metric, direction, dimensions, points, notes)


def _score(value: float | None, sign: int) -> float:
    """A value on a larger-is-better scale; an unknown one is worst."""
    return float("-inf") if value is None else sign * value


def _dominates(a: list[float], b: list[float]) -> bool:
    return all(x >= y for x, y in zip(a, b)) and any(x > y for x, y in zip(a, b))
