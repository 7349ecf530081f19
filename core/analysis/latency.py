"""Latency as a decision metric, and the quality-cost-latency frontier.

**Latency quantiles.** For each system, p50, p95 and p99 of the stored per-output latencies (ok outputs that
report one; ``numpy.quantile``, linear) with 95% percentile-bootstrap intervals
(:func:`ragassay.analysis.bootstrap.quantile_ci`, seeded). The mean difference of per-sample latency between two
systems is decided like any other metric when ``latency_s`` is declared in ``[evaluation] decide`` (and so is
``tokens``, :mod:`.tokens`).

**The frontier.** A system is *dominated* when another is at least as good on quality (the mean of one metric, by
its direction), cost per answered sample and latency, and better on one of them; the frontier is the systems no
other dominates (Pareto optimality). ``[evaluation] frontier``
(:class:`ragassay.config.frontier_options.FrontierSettings`) chooses the latency quantile (p50 by default, p95 or
p99) and the cost (dollars per answered sample by default, or tokens, input + output, per answered sample). Quality
and cost compare point estimates (a system just off the frontier may not be worse beyond noise: see the verdicts).
Latency compares the chosen quantile's intervals: one system is faster than another only when its 95% interval lies
wholly below the other's; overlapping intervals are a tie, so a sub-millisecond difference inside the noise never
decides (a system without an interval, fewer than 2 latencies, ties every other that reports one). The quality
metric (:func:`quality_metric`) is the first of the decision family, else the first column that is not constant, so
``compare``, the cost view and the report judge quality by the same metric. A cost in dollars that is unknown (an
unpriced model) for any system leaves cost out of the comparison, and so does a latency no system reports; the
result says which dimensions, which quantile and which cost were used (:meth:`Frontier.basis`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..config.frontier_options import DOLLARS, TOKENS, FrontierSettings
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
    """One system's position: quality, cost per answered sample (dollars or tokens: :attr:`Frontier.cost`), the
    compared latency quantile (and its interval); who dominates it."""

    system: str
    quality: float | None
    cost_per_answer: float | None
    latency: float | None  # the frontier's quantile (:attr:`Frontier.latency`), seconds
    dominated_by: list[str]
    latency_ci: tuple[float, float] | None = None  # that quantile's 95% interval

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
    latency: str = "p50"  # the latency quantile compared: p50 | p95 | p99
    cost: str = DOLLARS  # the cost compared: dollars | tokens (per answered sample)

    @property
    def systems(self) -> list[str]:
        """The systems on the frontier, in run order."""
        return [p.system for p in self.points if p.on_frontier]

    def dimension(self, name: str) -> str:
        """One compared dimension in words: ``contains_answer (higher is better)``, ``tokens per answer``,
        ``p95 latency (apart only when the 95% intervals are disjoint)``."""
        if name == "quality":
            return f"{self.metric} ({self.direction} is better)"
        if name == "cost":
            return "tokens per answer" if self.cost == TOKENS else "cost per answer in dollars"
        return f"{self.latency} latency (apart only when the 95% intervals are disjoint)"

    def basis(self) -> str:
        """What the frontier compared, for its legend: ``not dominated on X, Y and Z``."""
        words = [self.dimension(d) for d in self.dimensions]
        listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
        return f"not dominated on {listed}"


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


def quality_metric(columns: Sequence[str], family: Sequence[str], constant: Sequence[str]) -> str | None:
    """The metric a frontier judges quality by: the first of the decision ``family`` that is a column (never the
    latency itself), else the first column not in ``constant``, else the first column; None without a column."""
    chosen = [m for m in family if m in columns and m != LATENCY]
    varying = [m for m in columns if m not in constant]
    return next(iter(chosen + varying + list(columns)), None)


def frontier_inputs(usages, latency: Sequence[LatencyStats], settings: FrontierSettings | None = None):
    """What :func:`frontier` compares besides quality, as ``settings`` choose (default: dollars, p50): per system
    its cost per answered sample (dollars, None when unknown; or mean tokens, input + output, per ok output) from
    ``usages`` (:class:`ragassay.analysis.usage.SystemUsage`), and its latency quantile with its interval."""
    settings = settings or FrontierSettings()
    if settings.cost == TOKENS:
        cost = {u.system: (u.input_tokens + u.output_tokens) / max(u.answered, 1) for u in usages}
    else:
        cost = {u.system: None if u.cost_usd is None else u.cost_usd / max(u.answered, 1) for u in usages}
    return cost, {s.system: s.at(settings.quantile) for s in latency}


def frontier(
    systems: Sequence[str],
    quality: dict[str, float | None],
    cost: dict[str, float | None],
    latency: dict[str, QuantileInterval | None],
    *,
    metric: str,
    direction: str = "higher",
    settings: FrontierSettings | None = None,
) -> Frontier:
    """The systems not dominated on (quality by ``direction``, cost lower, latency lower by its interval):
    ``cost`` and ``latency`` as ``settings`` chose them (:func:`frontier_inputs`; default: dollars per answer and
    the p50 with its interval; module docstring)."""
    settings = settings or FrontierSettings()
    dimensions, notes = ["quality"], []
    if any(cost[s] is None for s in systems):
        notes.append("cost left out: unknown for " + ", ".join(s for s in systems if cost[s] is None))
    else:
        dimensions.append("cost")
    at = {s: None if latency.get(s) is None else latency[s].value for s in systems}
    if all(at[s] is None for s in systems):
        notes.append("latency left out: no system reports one")
    else:
        dimensions.append("latency")
    sign = 1 if direction == "higher" else -1

    def compared(a: str, b: str) -> list[int]:  # per dimension: 1 when a is better than b, -1 worse, 0 a tie
        signs = [_sign(_score(quality[a], sign) - _score(quality[b], sign))]
        if "cost" in dimensions:
            signs.append(_sign(cost[b] - cost[a]))
        if "latency" in dimensions:
            signs.append(_faster(latency.get(a), latency.get(b)))
        return signs

    points = []
    for system in systems:
        by = [other for other in systems if other != system and _dominates(compared(other, system))]
        points.append(FrontierPoint(system, quality[system], cost[system], at[system], by, _interval(latency, system)))
    return Frontier(metric, direction, dimensions, points, notes, settings.latency, settings.cost)


def _faster(a: QuantileInterval | None, b: QuantileInterval | None) -> int:
    """1 when ``a``'s latency quantile is lower than ``b``'s beyond noise (``a``'s interval wholly below ``b``'s),
    -1 when higher, 0 when the intervals overlap or one has none; a latency beats no latency at all."""
    known_a, known_b = a is not None and a.value is not None, b is not None and b.value is not None
    if not (known_a and known_b):
        return int(known_a) - int(known_b)
    if a.ci_low is None or b.ci_low is None:
        return 0
    return 1 if a.ci_high < b.ci_low else -1 if a.ci_low > b.ci_high else 0


def _interval(latency: dict, system: str) -> tuple[float, float] | None:
    found = latency.get(system)
    return None if found is None or found.ci_low is None else (found.ci_low, found.ci_high)


def _score(value: float | None, sign: int) -> float:
    """A value on a larger-is-better scale; an unknown one is worst."""
    return float("-inf") if value is None else sign * value


def _sign(difference: float) -> int:
    if difference != difference:  # both unknown (-inf - -inf): a tie
        return 0
    return (difference > 0) - (difference < 0)


def _dominates(signs: list[int]) -> bool:
    return all(x >= 0 for x in signs) and any(x > 0 for x in signs)
