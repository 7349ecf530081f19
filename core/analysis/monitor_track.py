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

import numpy as np

WORST = 20
MAX_VALUES = 50
OTHER = "(other)"
SEGMENT_FIELDS = ("cusum", "start", "start_at", "sum", "sq", "n")


def new_segments(shape: tuple[int, int]) -> dict[str, np.ndarray]:
    """The CUSUM state of every bettor, before any trace (C_0 = 0, so the first trace starts a segment)."""
    return {name: np.zeros(shape) for name in SEGMENT_FIELDS}


def advance_segments(segments: dict[str, np.ndarray], index: int, at: float, x: float, factor: np.ndarray) -> None:
    """One trace (0-based ``index``, time ``at``, rescaled value ``x``, factors (2, K)) into every CUSUM, in place."""
    reset = segments["cusum"] < 1.0
    segments["cusum"] = np.maximum(segments["cusum"], 1.0) * factor
    for name, value in (("start", index), ("start_at", at), ("sum", 0.0), ("sq", 0.0), ("n", 0.0)):
        segments[name][reset] = value
    segments["sum"] += x
    segments["sq"] += x * x
    segments["n"] += 1


def segment_key(side: int, start: float) -> str:
    """The name of a segment's tracker: side and start index."""
    return f"{side}:{int(start)}"


def track(trackers: dict, totals: dict, segments: dict, obs, index: int, version_keys) -> None:
    """Record one trace in the detector's version totals and in the tracker of every live segment, in place;
    trackers of segments no bettor starts at any more are dropped."""
    seen = _versions_of(obs, version_keys)
    _count(totals, seen)
    live = {segment_key(side, start): side for side in (0, 1) for start in set(segments["start"][side].tolist())}
    for key in [key for key in trackers if key not in live]:
        del trackers[key]
    for key, side in live.items():
        tracker = trackers.setdefault(key, {"worst": [], "versions": {}})
        entry = [-obs.value if side == 0 else obs.value, index, obs.trace_id]
        if len(tracker["worst"]) < WORST:
            heapq.heappush(tracker["worst"], entry)
        else:
            heapq.heappushpop(tracker["worst"], entry)
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
        values = counts.setdefault(key, {})
        if value not in values and len(values) >= MAX_VALUES:
            value = OTHER
        values[value] = values.get(value, 0) + 1
