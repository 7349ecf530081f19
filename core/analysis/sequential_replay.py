"""Replaying a sequential run on scores already known: which comparison settled where, and what it saved.

Given every system's per-sample values of each metric (one order for all, seeded when ``seed`` is given), each
comparison of the decision family runs the rules of :mod:`ragassay.analysis.sequential` at level alpha / m, m the
number of comparisons (Bonferroni: every sequence covers its mean at all times with probability 1 - alpha / m,
so all of them do with probability at least 1 - alpha, whichever comparison stops when). A system is judged
until every comparison it takes part in (as candidate or as baseline) has settled; the calls saved count one
judge call per sample, system and metric of that system (the judges of a run, each called once per answer).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from .bootstrap import generator
from .sequential import DECISIONS, bounds, check_range, settle


@dataclasses.dataclass(frozen=True)
class SequentialSettings:
    """How a sequential run stops: family-wise ``alpha``, the ``batch`` of samples judged between two checks,
    and the most samples a comparison may take (``max_samples``; None: all)."""

    alpha: float = 0.05
    batch: int = 50
    max_samples: int | None = None

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha}")
        if self.batch < 1 or (self.max_samples is not None and self.max_samples < 1):
            raise ValueError(f"batch and max_samples must be at least 1, got {self.batch} and {self.max_samples}")


@dataclasses.dataclass(frozen=True)
class Comparison:
    """One comparison of the decision family: ``system`` against ``baseline`` on ``metric``, declared in
    [``low``, ``high``]; ``margin`` (metric units, None: none) also settles it as non-inferior."""

    system: str
    baseline: str
    metric: str
    low: float
    high: float
    higher_is_better: bool = True
    margin: float | None = None


@dataclasses.dataclass(frozen=True)
class Settled:
    """One comparison replayed: its ``decision`` and the sample count ``settled_at`` (the maximum when "not
    settled"); over the ``n`` paired samples up to there, the mean gain and the confidence sequence
    [``ci_low``, ``ci_high``] at ``level`` (gains: candidate - baseline, sign-flipped for lower-is-better)."""

    comparison: Comparison
    decision: str
    settled_at: int
    n: int
    mean: float | None
    ci_low: float
    ci_high: float
    level: float


@dataclasses.dataclass(frozen=True)
class Replay:
    """The replayed run: each comparison settled, the samples each system was judged on, and the calls."""

    settled: list[Settled]
    samples: int  # the full run
    judged: dict[str, int]
    calls: dict[str, int]
    full_calls: dict[str, int]

    @property
    def calls_saved(self) -> int:
        """Judge calls the full run makes and this one does not."""
        return sum(self.full_calls.values()) - sum(self.calls.values())

    def batch_calls(self, batch: int) -> list[int]:
        """Calls made in each batch of ``batch`` samples (the last may be shorter)."""
        per_sample = {s: self.calls[s] // max(self.judged[s], 1) for s in self.judged}
        starts = range(0, max(self.judged.values(), default=0), batch)
        return [
            sum(per_sample[s] * max(0, min(start + batch, self.judged[s]) - start) for s in self.judged)
            for start in starts
        ]


def replay(
    values: Mapping[str, Mapping[str, Sequence[float]]],
    comparisons: Sequence[Comparison],
    settings: SequentialSettings = SequentialSettings(),
    seed: int | None = None,
) -> Replay:
    """Replay the sequential procedure on ``values[system][metric]`` (per-sample, NaN = unscored, one length
    for all), in a ``seed``-ed random order (None: as given)."""
    total = _length(values)
    order = np.arange(total) if seed is None else generator(seed).permutation(total)
    if not comparisons:
        raise ValueError("a sequential run needs at least one comparison in its decision family")
    level = settings.alpha / len(comparisons)
    settled = [_one(values, c, order, level, settings) for c in comparisons]
    judged = {system: total for system in values}
    for system in values:
        involved = [s.settled_at for s in settled if system in (s.comparison.system, s.comparison.baseline)]
        if involved:
            judged[system] = max(involved)
    calls = {s: judged[s] * len(values[s]) for s in values}
    full = {s: total * len(values[s]) for s in values}
    return Replay(settled, total, judged, calls, full)


def _one(values, comparison: Comparison, order: np.ndarray, level: float, settings: SequentialSettings) -> Settled:
    sides = []
    for system in (comparison.system, comparison.baseline):
        if comparison.metric not in values.get(system, {}):
            raise ValueError(f"no values of {comparison.metric!r} for system {system!r}")
        side = np.asarray(values[system][comparison.metric], dtype=np.float64)
        check_range(side, comparison.low, comparison.high, f"{system} / {comparison.metric}")
        sides.append(side[order])
    gains = (sides[0] - sides[1]) * (1 if comparison.higher_is_better else -1)
    width = comparison.high - comparison.low
    if comparison.margin is not None and not 0 <= comparison.margin < width:
        raise ValueError(f"margin must lie in [0, {width}) for {comparison.metric!r}, got {comparison.margin}")
    paths = settle(gains, width, level, settings.batch, comparison.margin, settings.max_samples)
    upto = int(paths.settled_at[0])
    low, high = bounds(gains, width, level, upto, comparison.margin)
    used = gains[:upto][~np.isnan(gains[:upto])]
    mean = float(used.mean()) if len(used) else None
    return Settled(comparison, DECISIONS[int(paths.codes[0])], upto, len(used), mean, low, high, level)


def _length(values: Mapping[str, Mapping[str, Sequence[float]]]) -> int:
    lengths = {len(v) for metrics in values.values() for v in metrics.values()}
    if len(lengths) != 1:
        raise ValueError(f"every system and metric needs the same samples, got lengths {sorted(lengths)}")
    return lengths.pop()
