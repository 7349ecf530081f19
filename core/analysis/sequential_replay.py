"""Replaying a sequential run on scores already known: which comparison settled where, and what it saved.

Given every system's per-sample values of each metric (one order for all: the seeded order of a
sequential run, :func:`ragassay.sampling.seeded_order`, when ``seed`` is given), each
comparison of the decision family runs the rules of :mod:`ragassay.analysis.sequential` at level alpha / m, m the
number of comparisons (Bonferroni: every sequence covers its mean at all times with probability 1 - alpha / m,
so all of them do with probability at least 1 - alpha, whichever comparison stops when). A system is judged
until every comparison it takes part in (as candidate or as baseline) has settled; the calls saved count one
judge call per sample, system and metric of that system (the judges of a run, each called once per answer).
:func:`check` is the one step a live sequential run takes after each batch (:mod:`ragassay.engine.sequential.plan`), so
replaying a complete run predicts exactly where a live one stops.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from ..config.sequential import SequentialSettings
from ..sampling import seeded_order
from .sequential import DECISIONS, bounds, check_range, checkpoints, settle

OPEN = "open"  # a comparison of a live run not settled yet (more samples to come)


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
    settings: SequentialSettings | None = None,
    seed: int | None = None,
    question_ids: Sequence[str] | None = None,
) -> Replay:
    """Replay the sequential procedure on ``values[system][metric]`` (per-sample, NaN = unscored, one length
    for all, in the order of ``question_ids``; default ids "0", "1", ...), in the order a sequential run with
    ``[evaluation] seed = seed`` processes them (:func:`ragassay.sampling.seeded_order`; None: as given). Replaying
    a complete run's scores gives exactly the decisions, stopping points and samples judged of a live
    sequential run with the same settings and seed."""
    settings = settings or SequentialSettings()
    total = _length(values)
    ids = list(question_ids) if question_ids is not None else [str(i) for i in range(total)]
    if len(ids) != total:
        raise ValueError(f"{len(ids)} question ids for {total} samples")
    order = np.arange(total) if seed is None else np.asarray(seeded_order(seed, ids), dtype=np.int64)
    ordered = {
        s: {m: np.asarray(v, dtype=np.float64)[order] for m, v in metrics.items()} for s, metrics in values.items()
    }
    settled = check(ordered, comparisons, settings, seen=total)
    judged = judged_counts(settled, list(values), total, settings)
    calls = {s: judged[s] * len(values[s]) for s in values}
    full = {s: total * len(values[s]) for s in values}
    return Replay(settled, total, judged, calls, full)


def check(
    ordered: Mapping[str, Mapping[str, np.ndarray]],
    comparisons: Sequence[Comparison],
    settings: SequentialSettings,
    *,
    seen: int,
) -> list[Settled]:
    """Every comparison after the first ``seen`` samples of ``ordered`` (values in processing order, NaN =
    unscored or not processed): its :class:`Settled` once a rule held at a check (every ``settings.batch``
    samples, and at the maximum or the last sample), else None (still open). A live run calls it after each
    complete batch; :func:`replay` once with every sample; both see the same checks, so they agree."""
    if not comparisons:
        raise ValueError("a sequential run needs at least one comparison in its decision family")
    total = _length(ordered)
    level = settings.alpha / len(comparisons)
    last = total if settings.max_samples is None else min(total, settings.max_samples)
    found = [_one(ordered, c, level, settings, seen) for c in comparisons]
    return [s if s.decision != DECISIONS[0] or seen >= last else dataclasses.replace(s, decision=OPEN) for s in found]


def judged_counts(
    settled: Sequence[Settled], systems: Sequence[str], total: int, settings: SequentialSettings | None = None
) -> dict[str, int]:
    """Samples each system is processed on: up to the last settling point of the comparisons it takes part in,
    then ``settings.lookahead`` batches more (a live run has started them while it checked; never past the
    last check), all of them when it takes part in none. The rule of a live run: a system settled after batch
    k is processed on exactly k + lookahead batches."""
    settings = settings or SequentialSettings()
    ends = checkpoints(total, settings.batch, settings.max_samples) if total else np.zeros(1, dtype=int)
    judged = {}
    for system in systems:
        involved = [s.settled_at for s in settled if system in (s.comparison.system, s.comparison.baseline)]
        if not involved:
            judged[system] = total
            continue
        index = int(np.searchsorted(ends, max(involved)))  # the check it settled at (or the last still open)
        judged[system] = int(ends[min(index + settings.lookahead, len(ends) - 1)])
    return judged


def _one(values, comparison: Comparison, level: float, settings: SequentialSettings, seen: int) -> Settled:
    sides = []
    for system in (comparison.system, comparison.baseline):
        if comparison.metric not in values.get(system, {}):
            raise ValueError(f"no values of {comparison.metric!r} for system {system!r}")
        side = np.asarray(values[system][comparison.metric], dtype=np.float64)[:seen]
        check_range(side, comparison.low, comparison.high, f"{system} / {comparison.metric}")
        sides.append(side)
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
