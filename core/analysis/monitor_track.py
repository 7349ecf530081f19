"""What an alarm says beyond "changed": when the change began, how large it is, and the traces and versions since.

**When** (``started_at``). Each bettor (side, k) of :mod:`ragassay.analysis.monitor_evidence` also keeps the CUSUM
recursion C_t = max(C_{t-1}, 1) F_t (Page 1954, *Continuous inspection schemes*, Biometrika 41), whose value is
max_j prod_{i=j..t} F_i and whose argmax j (the segment start, reset to t whenever C_{t-1} < 1, the earlier start
kept on a tie) is the start that makes the bettor's evidence largest: the estimated change point. The alarm
reports the start of the bettor that contributes most to the evidence when it fires.

**How large** (``change``, ``low``, ``high``). The mean of the values since that start minus the reference, with
the normal-approximation interval mean +- z_{1 - alpha/2} s / sqrt(n) of those n values (s their standard
deviation). It is an estimate, not a second test: the start was chosen from the same data (the one that makes
the evidence largest), so the interval is conditional on it and leans away from 0; the guarantee is the alarm's,
not the interval's. (A finite-sample empirical-Bernstein interval, :func:`bernstein_interval`, is too wide on the
few dozen traces a large change needs to alarm: it often straddles 0 at the moment of an alarm.)

**Which traces and versions.** Every live segment start keeps, in bounded memory, the :data:`WORST` most extreme
traces since it began (lowest values for a drop, highest for a rise; the later one first on a tie) and the count
of each version attribute's values since it began (at most :data:`MAX_VALUES` values per attribute, the rest
counted under :data:`OTHER`); the detector keeps the same counts since its (re)start. A segment is dropped as soon
as no bettor starts there, so at most 2K are alive. Versions are ordered first suspect first: by the share of the
value's traces that arrived since the start (1.0 for a version that appeared with the change), then by count.
"""

from __future__ import annotations

import heapq
import math

WORST = 20
MAX_VALUES = 50
OTHER = "(other)"
SEGMENT_FIELDS = ("cusum", "start", "start_at", "sum", "sq", "n")


def new_segments(shape: tuple[int, int]) -> list[list[list]]:
    """The CUSUM segment of every bettor, (sides, K) of them, before any trace (C_0 = 0, so the first trace starts a
    segment). A segment is a list: its :data:`SEGMENT_FIELDS` (floats), then its tracker's :func:`segment_key`."""
    return [
        [[0.0] * len(SEGMENT_FIELDS) + [segment_key(side, 0.0)] for _ in range(shape[1])] for side in range(shape[0])
    ]


def segment_fields(segments: list[list[list]]) -> dict[str, list[list[float]]]:
    """The segments by field: each of :data:`SEGMENT_FIELDS` -> its (sides, K) values (the stored form)."""
    return {name: [[segment[i] for segment in side] for side in segments] for i, name in enumerate(SEGMENT_FIELDS)}


def segments_from(fields: dict[str, list[list[float]]]) -> list[list[list]]:
    """The segments that :func:`segment_fields` gave ``fields``."""
    columns = [fields[name] for name in SEGMENT_FIELDS]
    return [
        [[float(column[side][k]) for column in columns] + [segment_key(side, start)] for k, start in enumerate(starts)]
        for side, starts in enumerate(fields["start"])
    ]


def advance_segments(segments: list[list[list]], index: int, at: float, x: float, factor) -> None:
    """One trace (0-based ``index``, time ``at``, rescaled value ``x``, factors (2, K)) into every CUSUM, in place."""
    squared = x * x
    for side, (row, factors) in enumerate(zip(segments, factor)):
        fresh = None  # a segment that starts here, less its C_t: its sums from 0.0
        for k, (cusum, start, start_at, total, sq, n, key) in enumerate(row):
            if cusum < 1.0:  # C_{t-1} < 1: C_t = max(C_{t-1}, 1) F_t = F_t
                if fresh is None:
                    fresh = (float(index), at, 0.0 + x, 0.0 + squared, 1.0, segment_key(side, index))
                row[k] = [factors[k], *fresh]
            else:
                row[k] = [cusum * factors[k], start, start_at, total + x, sq + squared, n + 1.0, key]


def segment_key(side: int, start: float) -> str:
    """The name of a segment's tracker: side and start index."""
    return f"{side}:{int(start)}"


def track(trackers: dict, totals: dict, segments: list, obs, index: int, version_keys) -> None:
    """Record one trace in the detector's version totals and in the tracker of every live segment, in place;
    trackers of segments no bettor starts at any more are dropped."""
    seen = _versions_of(obs, version_keys)
    _count(totals, seen)
    live = {segment[-1]: side for side, row in enumerate(segments) for segment in row}
    for key in [key for key in trackers if key not in live]:
        del trackers[key]
    value, trace_id = obs.value, obs.trace_id
    for key, side in live.items():
        tracker = trackers.get(key)
        if tracker is None:
            tracker = trackers[key] = {"worst": [], "versions": {}}
        worst = tracker["worst"]
        entry = [-value if side == 0 else value, index, trace_id]
        if len(worst) < WORST:
            heapq.heappush(worst, entry)
        else:
            heapq.heappushpop(worst, entry)
        _count(tracker["versions"], seen)


def worst_first(tracker: dict) -> list[str]:
    """The tracker's trace ids, most extreme first (the later one first on a tie)."""
    return [trace_id for _, _, trace_id in sorted(tracker["worst"], reverse=True)]


def suspects(since: dict[str, dict[str, int]], totals: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """The counts since the start, per attribute, first suspect first (module docstring); attributes ordered by
    their first suspect."""

    def order(key: str, value: str, count: int) -> tuple:
        total = max(totals.get(key, {}).get(value, count), count, 1)
        return (-count / total, -count, value)

    ranked = {key: sorted(values.items(), key=lambda item, key=key: order(key, *item)) for key, values in since.items()}
    keys = sorted(ranked, key=lambda key: order(key, *ranked[key][0]) if ranked[key] else (0.0, 0, ""))
    return {key: dict(ranked[key]) for key in keys if ranked[key]}


def normal_interval(total: float, sq: float, n: float, alpha: float) -> tuple[float, float]:
    """Two-sided (1 - alpha) normal-approximation interval for the mean of ``n`` values in [0, 1] with sum ``total``
    and sum of squares ``sq`` (module docstring), clipped to [0, 1]; [0, 1] below 2 values."""
    from statistics import NormalDist

    if n < 2:
        return 0.0, 1.0
    mean = total / n
    sd = math.sqrt(max((sq - n * mean * mean) / (n - 1), 0.0))
    half = NormalDist().inv_cdf(1 - alpha / 2) * sd / math.sqrt(n)
    return max(mean - half, 0.0), min(mean + half, 1.0)


def bernstein_interval(total: float, sq: float, n: float, alpha: float) -> tuple[float, float]:
    """Two-sided (1 - alpha) empirical-Bernstein interval for the mean of ``n`` values in [0, 1] with sum ``total``
    and sum of squares ``sq`` (Maurer & Pontil 2009, Theorem 4, alpha/2 a side), clipped to [0, 1]."""
    if n < 2:
        return 0.0, 1.0
    mean = total / n
    var = max((sq - n * mean * mean) / (n - 1), 0.0)
    log_term = math.log(4.0 / alpha)
    half = math.sqrt(2.0 * var * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))
    return max(mean - half, 0.0), min(mean + half, 1.0)


def _versions_of(obs, version_keys) -> list[tuple[str, str]]:
    return [(key, str(obs.attributes[key])) for key in version_keys if key in obs.attributes]


def _count(counts: dict[str, dict[str, int]], seen: list[tuple[str, str]]) -> None:
    for key, value in seen:
        values = counts.get(key)
        if values is None:
            values = counts[key] = {}
        if value in values:
            values[value] += 1
        elif len(values) < MAX_VALUES:
            values[value] = 1
        else:
            values[OTHER] = values.get(OTHER, 0) + 1
