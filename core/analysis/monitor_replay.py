"""Simulated streams for the change detector: false alarms without a change, and detection delay after one,
against a daily fixed-window test on the same streams.

**Streams.** ``streams`` independent streams of ``length`` 0/1 values (a judge's pass/fail), each Bernoulli(mean)
up to its change point and Bernoulli(mean - shift) from it on; change points are uniform on
[:data:`CHANGE_FROM`, :data:`CHANGE_TO`) (traces), drawn per stream (shift 0: no change at all). Everything is
drawn from ``seed``.

**The detector** is :func:`ragassay.analysis.monitor_evidence.first_alarms` (the steps of
:class:`ragassay.analysis.monitor.Detector`) against the true reference ``mean`` at level ``alpha``.

**The daily fixed-window comparator.** Traces arrive at ``per_day`` a day, so the horizon holds
m = length // per_day whole days. At the end of each day its window of ``per_day`` values is compared with the
reference: the two-sided one-sample t interval for the window's mean at level 1 - alpha / m (Bonferroni over the
m days of the horizon, as ``traces trend`` does over its windows; trend uses a BCa bootstrap interval for a
difference of two windows, here the reference is a known number, so the interval is the t interval of one
window, which for windows of hundreds of values is what the bootstrap approximates). It fires on the first day
whose interval excludes the reference; its alarm time is the last trace of that day. Unlike the detector, its
bound holds only for the horizon fixed in advance (m days), not forever.

**Delay** (both): alarm trace - change trace + 1, in traces; infinite when nothing fired in the horizon or when
the first alarm came before the change (a false alarm, so that stream's change went undetected in the sense
that counts). Medians are over all streams, so an infinite median means at most half the streams detected it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .monitor_evidence import first_alarms

CHANGE_FROM, CHANGE_TO = 1_000, 3_000
PER_DAY = 500


@dataclasses.dataclass(frozen=True)
class Simulation:
    """One scenario: the detector's and the daily window's first alarm and delay on every stream."""

    shift: float
    mean: float
    alpha: float
    length: int
    per_day: int
    change_at: np.ndarray  # 0-based trace index of the change, ``length`` when there is none
    detector_fired: np.ndarray  # 0-based index of the first alarm, -1 when none
    window_fired: np.ndarray

    @property
    def detector_delay(self) -> np.ndarray:
        return delays(self.detector_fired, self.change_at)

    @property
    def window_delay(self) -> np.ndarray:
        return delays(self.window_fired, self.change_at)

    def false_alarms(self, which: str = "detector") -> int:
        """Streams whose first alarm came before their change (every alarm, with no change)."""
        fired = self.detector_fired if which == "detector" else self.window_fired
        return int(((fired >= 0) & (fired < self.change_at)).sum())


def delays(fired: np.ndarray, change_at: np.ndarray) -> np.ndarray:
    """Traces from the change to the first alarm, inclusive; inf when none fired or it fired before the change."""
    fired, change_at = np.asarray(fired), np.asarray(change_at)
    return np.where(fired >= change_at, fired - change_at + 1, np.inf).astype(np.float64)


def daily_window_alarms(x: np.ndarray, reference: float, alpha: float, per_day: int) -> np.ndarray:
    """The last trace index of the first day whose window mean differs from ``reference`` (module docstring),
    per row of ``x`` (rows, n); -1 when no day did."""
    from scipy import stats

    rows, n = x.shape
    days = n // per_day
    window = x[:, : days * per_day].reshape(rows, days, per_day)
    sd = window.std(axis=2, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (window.mean(axis=2) - reference) / (sd / math.sqrt(per_day))
    critical = stats.t.ppf(1 - alpha / (2 * days), per_day - 1)
    # no spread at all: the window differs exactly when its mean does
    flag = np.where(sd > 0, np.abs(t) > critical, window.mean(axis=2) != reference)
    first = np.where(flag.any(axis=1), flag.argmax(axis=1), -1)
    return np.where(first >= 0, (first + 1) * per_day - 1, -1)


def draw_streams(
    shift: float, *, streams: int, length: int, mean: float, margin: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The 0/1 values (streams, length) of one scenario and each stream's change point (module docstring)."""
    rng = np.random.default_rng([seed, round(shift * 10_000), round(margin * 10_000)])
    if shift:
        change_at = rng.integers(CHANGE_FROM, min(CHANGE_TO, length), size=streams)
    else:
        change_at = np.full(streams, length)
    level = np.where(np.arange(length)[None, :] >= change_at[:, None], mean - shift, mean - margin)
    return (rng.random((streams, length)) < level).astype(np.float64), change_at


def simulate(
    shift: float,
    *,
    streams: int = 1_000,
    length: int = 5_000,
    mean: float = 0.8,
    alpha: float = 0.05,
    per_day: int = PER_DAY,
    margin: float = 0.0,
    seed: int = 0,
) -> Simulation:
    """Draw the streams of one scenario and run both procedures on them (module docstring); ``margin`` is the
    detector's; before any change the streams sit at ``mean - margin``, the edge of "no change"."""
    x, change_at = draw_streams(shift, streams=streams, length=length, mean=mean, margin=margin, seed=seed)
    fired, _ = first_alarms(x, mean, alpha, margin)
    window = daily_window_alarms(x, mean, alpha, per_day)
    return Simulation(shift, mean, alpha, length, per_day, change_at, fired, window)
