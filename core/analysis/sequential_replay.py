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

**Turns of conversations** (``clusters``: each position's conversation): the sequential unit is the conversation,
not the turn. A conversation enters the sequence once its last turn has been processed, with its mean gain over
its scored turns, placed at that turn's position (the other positions carry no observation: no bet, no update),
so the checks stay at the same sample counts and a settled comparison names the samples processed. The estimand
is then the **conversation-weighted** mean gain (each conversation's mean gain, averaged over conversations), and
the betting sequence's guarantee rests on the conversations being independent and entering in an order unrelated
to their gains: the seeded order shuffles samples, so a longer conversation tends to complete later; where
length and gain are related, read the decision with that in mind (docs/statistics.md, "Conversations").
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
    clustered: bool = False  # n counts conversations (module docstring), not samples


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
    clusters: Sequence[str] | None = None,
) -> Replay:
    """Replay the sequential procedure on ``values[system][metric]`` (per-sample, NaN = unscored, one length
    for all, in the order of ``question_ids``; default ids "0", "1", ...), in the order a sequential run with
    ``[evaluation] seed = seed`` processes them (:func:`ragassay.sampling.seeded_order`; None: as given). Replaying
    a complete run's scores gives exactly the decisions, stopping points and samples judged of a live
    sequential run with the same settings and seed. ``clusters`` (each sample's conversation, in the order of
    ``question_ids``) makes conversations the sequential unit (module docstring)."""
    settings = settings or SequentialSettings()
    total = _length(values)
    ids = list(question_ids) if question_ids is not None else [str(i) for i in range(total)]
    if len(ids) != total:
        raise ValueError(f"{len(ids)} question ids for {total} samples")
    order = np.arange(total) if seed is None else np.asarray(seeded_order(seed, ids, clusters), dtype=np.int64)
    ordered = {
        s: {m: np.asarray(v, dtype=np.float64)[order] for m, v in metrics.items()} for s, metrics in values.items()
    }
    in_order = None if clusters is None else [clusters[i] for i in order]
    settled = check(ordered, comparisons, settings, seen=total, clusters=in_order)
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
    clusters: Sequence[str] | None = None,
) -> list[Settled]:
    """Every comparison after the first ``seen`` samples of ``ordered`` (values in processing order, NaN =
    unscored or not processed): its :class:`Settled` once a rule held at a check (every ``settings.batch``
    samples, and at the maximum or the last sample), else None (still open). A live run calls it after each
    complete batch; :func:`replay` once with every sample; both see the same checks, so they agree.
    ``clusters``: each position's conversation (every position, not only the first ``seen``), or None."""
    if not comparisons:
        raise ValueError("a sequential run needs at least one comparison in its decision family")
    total = _length(ordered)
    level = settings.alpha / len(comparisons)
    last = total if settings.max_samples is None else min(total, settings.max_samples)
    last_turns = conversation_ends(clusters)
    found = [_one(ordered, c, level, settings, seen, last_turns) for c in comparisons]
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


def conversation_ends(clusters: Sequence[str] | None) -> np.ndarray | None:
    """For each position, the position of the last turn of its conversation (None: independent samples)."""
    if clusters is None or len(set(clusters)) == len(clusters):
        return None
    last: dict[str, int] = {}
    for position, cluster in enumerate(clusters):
        last[cluster] = position
    return np.array([last[c] for c in clusters], dtype=np.int64)


def conversation_gains(gains: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Each conversation's mean gain over its scored turns at the position of its last turn, NaN elsewhere (and
    where none of its turns is scored)."""
    scored = ~np.isnan(gains)
    sums = np.bincount(ends, weights=np.where(scored, gains, 0.0), minlength=len(gains))
    counts = np.bincount(ends, weights=scored.astype(np.float64), minlength=len(gains))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    out = np.full(len(gains), np.nan)
    at = np.unique(ends)
    out[at] = means[at]
    return out


def _one(values, comparison: Comparison, level: float, settings: SequentialSettings, seen: int, ends=None) -> Settled:
    sides = []
    for system in (comparison.system, comparison.baseline):
        if comparison.metric not in values.get(system, {}):
            raise ValueError(f"no values of {comparison.metric!r} for system {system!r}")
        side = np.asarray(values[system][comparison.metric], dtype=np.float64)[:seen]
        check_range(side, comparison.low, comparison.high, f"{system} / {comparison.metric}")
        sides.append(side)
    gains = (sides[0] - sides[1]) * (1 if comparison.higher_is_better else -1)
    if ends is not None:
        gains = conversation_gains(np.concatenate([gains, np.full(len(ends) - len(gains), np.nan)]), ends)[:seen]
    width = comparison.high - comparison.low
    if comparison.margin is not None and not 0 <= comparison.margin < width:
        raise ValueError(f"margin must lie in [0, {width}) for {comparison.metric!r}, got {comparison.margin}")
    paths = settle(gains, width, level, settings.batch, comparison.margin, settings.max_samples)
    upto = int(paths.settled_at[0])
    low, high = bounds(gains, width, level, upto, comparison.margin)
    used = gains[:upto][~np.isnan(gains[:upto])]
    mean = float(used.mean()) if len(used) else None
    code = DECISIONS[int(paths.codes[0])]
    return Settled(comparison, code, upto, len(used), mean, low, high, level, ends is not None)


def _length(values: Mapping[str, Mapping[str, Sequence[float]]]) -> int:
    lengths = {len(v) for metrics in values.values() for v in metrics.values()}
    if len(lengths) != 1:
        raise ValueError(f"every system and metric needs the same samples, got lengths {sorted(lengths)}")
    return lengths.pop()
