"""Watching a metric forever: a change detector whose probability of ever raising a false alarm is at most alpha.

:class:`Detector` takes one scored trace at a time (:class:`Observation`) and returns an :class:`Alarm` once, at
the first trace where the evidence that the metric's mean left the band reference +- margin reaches 1 / alpha.
The evidence is an e-detector with weighted start times over betting e-processes for bounded values; the bound
P(ever alarm | no change) <= alpha, over an unbounded horizon, is derived in
:mod:`ragassay.analysis.monitor_evidence`; the alarm's change point, size, traces and versions are explained in
:mod:`ragassay.analysis.monitor_track`. Memory is O(K) numbers plus at most 2K bounded trackers (K = 6 bettors a
side), whatever the stream's length: no value is kept.

**The reference.** The guarantee is for the reference as given. A reference estimated from a stored run or a
window is itself uncertain: when the stream's true mean equals the reference run's true mean, the estimate may be
off by more than the margin, and then "no change" is false for the detector and an alarm is not a false alarm by
its definition. Set ``margin`` to at least :func:`reference_uncertainty` (the half-width of a 1 - alpha interval
for the reference's mean); then P(ever alarm | the stream's mean stays at the reference run's true mean) <= 2
alpha (the interval misses with probability <= alpha, the detector alarms falsely with probability <= alpha).

**Restarts.** :meth:`Detector.restart` (a new judge, a new reference) starts a new detector: the bound holds afresh
from there, for each restarted period separately.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError, DatasetError
from . import monitor_evidence as ev
from . import monitor_track as tr

WORSE, BETTER = "worse", "better"
FORMAT = 1
METHOD = (
    "e-detector with weighted start times (Shin, Ramdas & Rinaldo 2024, E-detectors: a nonparametric framework for "
    "sequential change detection, NEJSDS 2(2); start weights summing to 1, so P(ever alarm | no change) <= alpha by "
    "Ville's inequality) over betting e-processes for bounded values (Waudby-Smith & Ramdas 2024, JRSS-B 86(1)); "
    "change point: CUSUM argmax (Page 1954); change interval: normal approximation since the change point"
)


@dataclasses.dataclass(frozen=True)
class Observation:
    """One scored trace: the metric's ``value`` (NaN = unscored), the trace's time ``at`` (epoch seconds), its id
    and its attributes (e.g. ``{"service.version": "1.4.2"}``)."""

    value: float
    at: float
    trace_id: str
    attributes: dict[str, str]


@dataclasses.dataclass(frozen=True)
class Alarm:
    """A change of ``metric``: ``direction`` is ``worse`` or ``better`` by the metric's direction; ``change`` is
    mean since ``started_at`` - reference with its interval [``low``, ``high``]; ``worst_traces`` most extreme
    first; ``versions`` maps each version attribute to its values' counts since ``started_at``, first suspect
    first."""

    metric: str
    direction: str
    change: float
    low: float
    high: float
    started_at: float
    fired_at: float
    observations: int
    worst_traces: list[str]
    versions: dict[str, dict[str, int]]
    alpha: float
    method: str


def reference_of(values: Sequence[float]) -> float:
    """The reference level from a stored run or window: the mean of its scored values (NaN skipped).

    :raises ragassay.errors.DatasetError: no scored value."""
    scored = _scored(values, "the reference")
    return float(scored.mean())


def reference_uncertainty(values: Sequence[float], alpha: float = 0.05, value_range=(0.0, 1.0)) -> float:
    """Half-width of the two-sided (1 - alpha) empirical-Bernstein interval (Maurer & Pontil 2009, Theorem 4) for
    the mean behind ``values``: a margin of at least this much covers the reference's own error (module
    docstring)."""
    low, high = _range(value_range)
    x = (_scored(values, "the reference") - low) / (high - low)
    lower, upper = tr.bernstein_interval(float(x.sum()), float((x * x).sum()), float(x.size), alpha)
    return max(x.mean() - lower, upper - x.mean()) * (high - low)


class Detector:
    """The change detector of one metric (module docstring); ``direction`` is the metric's (``higher`` or
    ``lower`` is better), ``margin`` the change, in the metric's units, that is not worth an alarm."""

    def __init__(
        self,
        metric: str,
        reference: float,
        *,
        alpha: float = 0.05,
        value_range: tuple[float, float] = (0.0, 1.0),
        direction: str = "higher",
        margin: float = 0.0,
        version_keys: Sequence[str] = ("service.version",),
    ) -> None:
        if not 0 < alpha < 1:
            raise ConfigError(f"watch {metric}: alpha {alpha} is outside (0, 1); give e.g. 0.05")
        if direction not in ("higher", "lower"):
            raise ConfigError(f"watch {metric}: direction {direction!r}: use 'higher' or 'lower' (which is better)")
        low, high = _range(value_range, metric)
        if not (math.isfinite(margin) and 0 <= margin < high - low):
            raise ConfigError(f"watch {metric}: margin {margin} must be >= 0 and below the range's width")
        self.metric, self.alpha, self.direction, self.margin = metric, float(alpha), direction, float(margin)
        self.value_range = (low, high)
        self._tolerance = float(8 * np.finfo(np.float64).eps * max(abs(low), abs(high), 1.0))  # beyond the range
        self.version_keys = tuple(version_keys)
        self.restart(reference)

    def restart(self, reference: float) -> None:
        """Start afresh against a new ``reference`` (after a judge change): the false-alarm bound restarts."""
        low, high = self.value_range
        if not (math.isfinite(reference) and low <= reference <= high):
            raise ConfigError(f"watch {self.metric}: reference {reference} is outside the range [{low}, {high}]")
        self.reference = float(reference)
        width = high - low
        self._lo = (reference - self.margin - low) / width
        self._hi = (reference + self.margin - low) / width
        self._n, self._unscored, self._total, self._sum_sq = 0, 0, 0.0, 0.0
        self._mixture = [[0.0] * len(ev.SHIFTS) for _ in range(2)]
        self._segments = tr.new_segments((2, len(ev.SHIFTS)))
        self._trackers: dict = {}
        self._totals: dict = {}
        self._cs = {"lam": 0.0, "lam_x": 0.0, "penalty": 0.0, "low": 0.0, "high": 1.0}
        self._fired = False

    def observe(self, obs: Observation) -> Alarm | None:
        """Take one scored trace; return the :class:`Alarm` at the first trace where the evidence reaches 1 / alpha
        (once: later traces still update the mean and its confidence sequence of :meth:`summary`, not the
        evidence, which stays at its value at the alarm, and never alarm again until :meth:`restart`).

        :raises ragassay.errors.DatasetError: the value lies outside the declared range."""
        x = self._rescaled(obs)
        if x is None:
            self._unscored += 1
            return None
        index, self._n = self._n, self._n + 1
        if not self._fired:  # after its alarm the evidence stays as it was (it would grow without bound)
            variance, weight = ev.variance(index, self._sum_sq), ev.start_weight(self._n)
            factor, self._mixture = ev.step(self._mixture, variance, x, self._lo, self._hi, weight)
            tr.advance_segments(self._segments, index, float(obs.at), x, factor)
            tr.track(self._trackers, self._totals, self._segments, obs, index, self.version_keys)
        self._update_sequence(x)
        self._total, self._sum_sq = ev.moments_after(self._n, self._total, self._sum_sq, x)
        if self._fired or self._evidence() < 1.0 / self.alpha:
            return None
        self._fired = True
        return self._alarm(obs)

    def summary(self) -> dict:
        """For a live page: traces seen, the mean since the (re)start with its confidence sequence's bounds now
        (the predictable plug-in empirical-Bernstein sequence of Waudby-Smith & Ramdas 2024, running
        intersection), the evidence against "no change" and the threshold it must reach."""
        low, high = self.value_range
        width = high - low
        mean = low + width * self._total / self._n if self._n else None
        return {
            "metric": self.metric,
            "reference": self.reference,
            "margin": self.margin,
            "n": self._n,
            "unscored": self._unscored,
            "mean": mean,
            "low": low + width * self._cs["low"],
            "high": low + width * self._cs["high"],
            "evidence": float(self._evidence()),
            "threshold": 1.0 / self.alpha,
            "fired": self._fired,
            "alpha": self.alpha,
        }

    def state(self) -> dict:
        """Everything needed to go on exactly where this detector is, as JSON-able plain data."""
        return {
            "format": FORMAT,
            "config": {
                "metric": self.metric,
                "reference": self.reference,
                "alpha": self.alpha,
                "value_range": list(self.value_range),
                "direction": self.direction,
                "margin": self.margin,
                "version_keys": list(self.version_keys),
            },
            "n": self._n,
            "unscored": self._unscored,
            "total": self._total,
            "sum_sq": self._sum_sq,
            "mixture": [list(row) for row in self._mixture],
            "segments": tr.segment_fields(self._segments),
            "trackers": self._trackers,
            "totals": self._totals,
            "sequence": dict(self._cs),
            "fired": self._fired,
        }

    @classmethod
    def restore(cls, state: dict) -> Detector:
        """The detector that :meth:`state` described: it raises the same alarms on the same later traces.

        :raises ragassay.errors.ConfigError: the state is not one this version wrote."""
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise ConfigError(
                f"watch state: format {state.get('format') if isinstance(state, dict) else None!r} "
                f"is not {FORMAT}; delete the state to start the detector afresh"
            )
        config = dict(state["config"])
        detector = cls(config.pop("metric"), config.pop("reference"), **config)
        detector._n, detector._unscored = int(state["n"]), int(state["unscored"])
        detector._total, detector._sum_sq = float(state["total"]), float(state["sum_sq"])
        detector._mixture = _floats(state["mixture"])
        detector._segments = tr.segments_from(state["segments"])
        detector._trackers = {
            key: {"worst": [list(e) for e in t["worst"]], "versions": {k: dict(v) for k, v in t["versions"].items()}}
            for key, t in state["trackers"].items()
        }
        detector._totals = {key: dict(values) for key, values in state["totals"].items()}
        detector._cs = {key: float(value) for key, value in state["sequence"].items()}
        detector._fired = bool(state["fired"])
        return detector

    def _evidence(self) -> float:
        return ev.evidence_of(self._mixture)

    def _rescaled(self, obs: Observation) -> float | None:
        value = obs.value
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        low, high = self.value_range
        if not (math.isfinite(value) and low - self._tolerance <= value <= high + self._tolerance):
            raise DatasetError(
                f"watch {self.metric}: trace {obs.trace_id} has value {value!r}, outside the declared range "
                f"[{low}, {high}]; declare the metric's true range or fix the metric"
            )
        return float(min(max((value - low) / (high - low), 0.0), 1.0))

    def _update_sequence(self, x: float) -> None:
        """One trace into the predictable plug-in empirical-Bernstein confidence sequence (Waudby-Smith & Ramdas
        2024): lambda_i = min(sqrt(2 log(2/alpha) / (s2_{i-1} i log(1 + i))), 1/2), center sum lambda x / sum
        lambda, half-width (log(2/alpha) + sum 4 (x_i - mu_{i-1})^2 psi_E(lambda_i)) / sum lambda,
        psi_E(l) = (-log(1 - l) - l) / 4; intersected over time."""
        i, cs, log_term = self._n, self._cs, math.log(2.0 / self.alpha)
        mean_before = (0.5 + self._total) / i
        lam = min(math.sqrt(2.0 * log_term / (ev.variance(i - 1, self._sum_sq) * i * math.log1p(i))), 0.5)
        cs["lam"] += lam
        cs["lam_x"] += lam * x
        cs["penalty"] += 4.0 * (x - mean_before) ** 2 * (-math.log1p(-lam) - lam) / 4.0
        center, half = cs["lam_x"] / cs["lam"], (log_term + cs["penalty"]) / cs["lam"]
        cs["low"], cs["high"] = max(cs["low"], center - half), min(cs["high"], center + half)

    def _alarm(self, obs: Observation) -> Alarm:
        mixture = np.array(self._mixture)
        side = int(np.argmax(mixture.mean(axis=1) * np.asarray(ev.SHARES)))
        k = int(np.argmax(mixture[side]))
        seg = dict(zip(tr.SEGMENT_FIELDS, self._segments[side][k]))
        low, high = self.value_range
        width = high - low
        lower, upper = tr.normal_interval(seg["sum"], seg["sq"], seg["n"], self.alpha)
        dropped = side == ev.DOWN
        tracker = self._trackers.get(tr.segment_key(side, seg["start"]), {"worst": [], "versions": {}})
        return Alarm(
            metric=self.metric,
            direction=WORSE if dropped == (self.direction == "higher") else BETTER,
            change=low + width * seg["sum"] / seg["n"] - self.reference,
            low=low + width * lower - self.reference,
            high=low + width * upper - self.reference,
            started_at=seg["start_at"],
            fired_at=float(obs.at),
            observations=self._n,
            worst_traces=tr.worst_first(tracker),
            versions=tr.suspects(tracker["versions"], self._totals),
            alpha=self.alpha,
            method=METHOD,
        )


def _scored(values: Sequence[float], what: str) -> np.ndarray:
    array = np.asarray(list(values), dtype=np.float64)
    scored = array[~np.isnan(array)]
    if not scored.size:
        raise DatasetError(f"{what} has no scored value; pick a run or window with scored values of the metric")
    return scored


def _floats(rows: list[list[float]]) -> list[list[float]]:
    """A stored (2, K) nest of numbers as float lists."""
    return [[float(value) for value in row] for row in rows]


def _range(value_range, metric: str = "watch") -> tuple[float, float]:
    low, high = (float(v) for v in value_range)
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ConfigError(f"watch {metric}: value_range [{low}, {high}] must be finite with low < high")
    return low, high
