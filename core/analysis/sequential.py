"""Stopping early: an anytime-valid confidence sequence for the mean paired gain of a bounded metric.

A metric declared in [low, high] gives per-sample gains g_i (candidate - baseline, sign-flipped for a
lower-is-better metric) in [-w, w], w = high - low; they are rescaled to x_i = (g_i + w) / 2w in [0, 1], and a
gain delta to m(delta) = (delta + w) / 2w. The samples come in a seeded random order, so the x_i are exchangeable
draws whose mean is the mean gain of the whole set, rescaled.

**Testing by betting** (Waudby-Smith & Ramdas 2024, *Estimating means of bounded random variables by betting*,
JRSS-B 86(1); the capital process and the predictable bets of their sections on betting confidence sequences).
For a candidate mean m, a gambler who bets the fraction lambda_i of her capital on "x_i is above m" holds

    K+_t(m) = prod_{i <= t} (1 + lambda+_i(m) (x_i - m)),    K-_t(m) = prod_{i <= t} (1 - lambda-_i(m) (x_i - m))

with 0 <= lambda+_i(m) <= c / m and 0 <= lambda-_i(m) <= c / (1 - m) (c = :data:`TRUNCATION`, so no factor is
below 1 - c), each chosen from x_1..x_{i-1} only. When the mean is m, both are nonnegative martingales with
K_0 = 1, so by Ville's inequality P(sup_t K_t(m) >= 2 / alpha) <= alpha / 2: the set of m that neither process has
ever pushed to 2 / alpha is a (1 - alpha) confidence sequence, valid at every t at once, hence at any stopping
time, however data-dependent (the lower and upper sides split alpha, a union bound).

**The bets.** Each side's capital is an even mix of two bettors, K = (K_aim + K_plug) / 2 (a mixture of
nonnegative martingales is one, so the guarantee holds unchanged). K_aim bets the aGRAPA fraction (approximate
growth-rate adaptive; Waudby-Smith & Ramdas 2024) aimed at the point whose rejection decides (m(0) for
"better"/"worse", m(-margin) for "non-inferior" when a margin is set); K_plug bets their predictable plug-in
fraction (PrPl), which keeps the interval narrow for every m:

    mu_t     = (1/2 + sum_{i <= t} x_i) / (t + 1)
    sigma2_t = (1/4 + sum_{i <= t} (x_i - mu_i)^2) / (t + 1)
    aim_t    = (mu_{t-1} - target) / (sigma2_{t-1} + (mu_{t-1} - target)^2)
    plug_t   = sqrt(2 log(2 / alpha) / (sigma2_{t-1} t log(1 + t)))
    lambda+_t(m) = min(max(bet_t, 0), c / m)              lambda-_t(m) = min(max(-bet_t, 0), c / (1 - m))

(for K_plug, bet_t = plug_t on the lower side and -plug_t on the upper). No bet depends on m except through the
truncation, so K+_t(m) decreases and K-_t(m) increases in m: the rejected sets are half-lines, the sequence is
an interval [L_t, U_t], and "the interval excludes 0" is exactly "a process rejected m(0)". Any predictable bet
keeps the guarantee; the mix is chosen for power at the deciding point without a wide interval elsewhere
(aGRAPA alone leaves the interval wide away from the deciding point, PrPl alone settles a 10-point difference
later; docs/statistics.md gives the figures).

**Rules**, checked after each batch (the rejection uses every sample so far: Ville's bound covers every t):
"better" once L > 0, "worse" once U < 0, "non-inferior" once L > -margin (margin set), "not settled" when the
maximum sample count is reached first. A settled comparison keeps its decision and its interval at that point.

Pure functions over numpy arrays; ``settle`` runs many independent sequences (rows) at once.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import DatasetError

TRUNCATION = 0.5  # c: the largest fraction of the capital at risk on one sample
BETTER, WORSE, NON_INFERIOR, NOT_SETTLED = "better", "worse", "non-inferior", "not settled"
DECISIONS = (NOT_SETTLED, BETTER, WORSE, NON_INFERIOR)  # settle()'s codes index this tuple
_BISECTIONS = 60


@dataclasses.dataclass(frozen=True)
class Paths:
    """What :func:`settle` found for each row: ``codes`` index :data:`DECISIONS`; ``settled_at`` is the sample
    count at the check where the row settled (the last sample checked when it did not)."""

    codes: np.ndarray
    settled_at: np.ndarray

    @property
    def decisions(self) -> list[str]:
        """The decisions in words, one per row."""
        return [DECISIONS[int(code)] for code in self.codes]


def check_range(values: np.ndarray, low: float, high: float, what: str) -> None:
    """Raise :class:`DatasetError` naming ``what`` when a value (NaN excepted) lies outside [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise DatasetError(f"{what}: a sequential comparison needs a finite range low < high, got [{low}, {high}]")
    values = np.asarray(values, dtype=np.float64)
    tolerance = 8 * np.finfo(np.float64).eps * max(abs(low), abs(high), 1.0)
    outside = ~np.isnan(values) & ((values < low - tolerance) | (values > high + tolerance))
    if outside.any():
        index = tuple(int(i) for i in np.argwhere(outside)[0])
        raise DatasetError(
            f"{what}: value {float(values[index])!r} at index {index[0] if len(index) == 1 else index} is outside the "
            f"declared range [{low}, {high}]; declare the metric's true range or fix the values"
        )


def rescale(gains: np.ndarray, width: float) -> np.ndarray:
    """Gains in [-width, width] to [0, 1] (NaN stays NaN)."""
    return (np.asarray(gains, dtype=np.float64) + width) / (2 * width)


def bets(x: np.ndarray, target: float) -> np.ndarray:
    """The aGRAPA bet before each sample (module docstring), aimed at ``target`` in [0, 1]; NaN = unpaired (no
    bet, no update). ``x`` is (rows, n); the result is signed: positive bets on "above", negative on "below"."""
    paired = ~np.isnan(x)
    values = np.where(paired, x, 0.0)
    count = np.cumsum(paired, axis=1)
    mu = (0.5 + np.cumsum(values, axis=1)) / (count + 1)
    sigma2 = (0.25 + np.cumsum(np.where(paired, (values - mu) ** 2, 0.0), axis=1)) / (count + 1)
    mu_before = np.concatenate([np.full((len(x), 1), 0.5), mu[:, :-1]], axis=1)
    sigma2_before = np.concatenate([np.full((len(x), 1), 0.25), sigma2[:, :-1]], axis=1)
    gap = mu_before - target
    return gap / (sigma2_before + gap * gap)


def plug_in(x: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in bet size before each sample (module docstring), unsigned; NaN = unpaired."""
    paired = ~np.isnan(x)
    values = np.where(paired, x, 0.0)
    count = np.cumsum(paired, axis=1)
    mu = (0.5 + np.cumsum(values, axis=1)) / (count + 1)
    sigma2 = (0.25 + np.cumsum(np.where(paired, (values - mu) ** 2, 0.0), axis=1)) / (count + 1)
    sigma2_before = np.concatenate([np.full((len(x), 1), 0.25), sigma2[:, :-1]], axis=1)
    t = np.maximum(count, 1)
    return np.sqrt(2 * math.log(2 / alpha) / (sigma2_before * t * np.log1p(t)))


def log_capital(x: np.ndarray, bet: np.ndarray, m: float | np.ndarray, side: int) -> np.ndarray:
    """log K+_t(m) (``side`` = 1) or log K-_t(m) (``side`` = -1) after every t, for rows of ``x`` (rows, n);
    ``m`` is a number or one value per row."""
    m = np.reshape(np.asarray(m, dtype=np.float64), (-1, 1))
    with np.errstate(divide="ignore"):
        cap = TRUNCATION / (m if side > 0 else 1 - m)
    stake = np.minimum(np.maximum(side * bet, 0.0), cap)
    paired = ~np.isnan(x)
    steps = np.where(paired, np.log1p(side * stake * (np.where(paired, x, m) - m)), 0.0)
    return np.cumsum(steps, axis=1)


def checkpoints(n: int, batch: int, limit: int | None = None) -> np.ndarray:
    """The sample counts after which the rules are checked: every ``batch`` samples, and the last one."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    last = n if limit is None else min(n, limit)
    points = np.arange(batch, last + 1, batch)
    return points if len(points) and points[-1] == last else np.append(points, last).astype(int)


def settle(
    gains: np.ndarray,
    width: float,
    alpha: float,
    batch: int,
    margin: float | None = None,
    limit: int | None = None,
) -> Paths:
    """Run the rules on each row of ``gains`` (rows, n; gains in [-width, width], NaN = unpaired) at level
    ``alpha``: checked after every ``batch`` samples, until ``limit`` samples (default all)."""
    x = _rows(gains, width)
    points = checkpoints(x.shape[1], batch, limit)
    bettors = _Bettors.of(x, alpha, width, margin)
    threshold = math.log(2 / alpha)

    def ever(m: float, side: int) -> np.ndarray:
        return np.maximum.accumulate(bettors.log_capital(m, side), axis=1)[:, points - 1]

    lower, upper = ever(0.5, 1), ever(0.5, -1)
    hits = {BETTER: lower >= threshold, WORSE: upper >= threshold}
    if margin is not None:
        hits[NON_INFERIOR] = ever(bettors.lower_target, 1) >= threshold
    return _first(hits, lower - upper, points)


def bounds(
    gains: np.ndarray, width: float, alpha: float, upto: int, margin: float | None = None
) -> tuple[float, float]:
    """The confidence sequence [L, U] of one sequence of gains after ``upto`` samples, in gain units: the
    intersection over every t <= upto (each side by bisection on its monotone capital; every gain at or below L,
    and at or above U, was rejected at some t)."""
    x = _rows(gains, width)[:, :upto]
    bettors = _Bettors.of(x, alpha, width, margin)
    threshold = math.log(2 / alpha)
    low = _bisect(lambda m: np.max(bettors.log_capital(m, 1)) >= threshold, rejected_below=True)
    high = _bisect(lambda m: np.max(bettors.log_capital(m, -1)) >= threshold, rejected_below=False)
    return low * 2 * width - width, high * 2 * width - width


def covers(
    gains: np.ndarray, width: float, alpha: float, value: float | np.ndarray, margin: float | None = None
) -> np.ndarray:
    """Whether the confidence sequence of each row of ``gains`` (rows, n) still holds ``value`` (gain units; one
    number, or one per row) after every t: (rows, n) booleans, False from the first t at which either side's
    capital at ``value`` reached 2 / alpha (the sequence :func:`bounds` gives, read at one point)."""
    x = _rows(gains, width)
    bettors = _Bettors.of(x, alpha, width, margin)
    threshold = math.log(2 / alpha)
    m = np.clip(rescale(np.broadcast_to(np.asarray(value, dtype=np.float64), (len(x),)), width), 0.0, 1.0)
    ever = [np.maximum.accumulate(bettors.log_capital(m, side), axis=1) for side in (1, -1)]
    return (ever[0] < threshold) & (ever[1] < threshold)


@dataclasses.dataclass(frozen=True)
class _Bettors:
    """The bets of one comparison's rows: aGRAPA aimed at the lower side's and at the upper side's deciding
    points, and the plug-in size; ``log_capital`` mixes them evenly (module docstring)."""

    x: np.ndarray
    lower_target: float
    lower_aim: np.ndarray
    upper_aim: np.ndarray
    plug: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray, alpha: float, width: float, margin: float | None) -> _Bettors:
        lower_target = 0.5 if margin is None else float(rescale(-margin, width))
        upper_aim = bets(x, 0.5)
        lower_aim = upper_aim if margin is None else bets(x, lower_target)
        return cls(x, lower_target, lower_aim, upper_aim, plug_in(x, alpha))

    def log_capital(self, m: float, side: int) -> np.ndarray:
        """log of (K_aim + K_plug) / 2 on ``side`` at ``m``, after every t."""
        aim = log_capital(self.x, self.lower_aim if side > 0 else self.upper_aim, m, side)
        plug = log_capital(self.x, side * self.plug, m, side)
        return np.logaddexp(aim, plug) - math.log(2)


def _rows(gains: np.ndarray, width: float) -> np.ndarray:
    gains = np.atleast_2d(np.asarray(gains, dtype=np.float64))
    if not gains.shape[1]:
        raise ValueError("a sequential comparison needs at least one sample")
    check_range(gains, -width, width, "paired gains")
    return np.clip(rescale(gains, width), 0.0, 1.0)


def _bisect(rejects, rejected_below: bool) -> float:
    """The boundary of a half-line of rejected m in [0, 1]; the returned point is rejected (or the end of [0, 1])."""
    inside, outside = (0.0, 1.0) if rejected_below else (1.0, 0.0)
    if rejects(0.5):  # m(0) first: a rejected 0 then gives a bound on its side of 0, as the decision says
        inside = 0.5
    else:
        outside = 0.5
    for _ in range(_BISECTIONS):
        middle = (inside + outside) / 2
        if rejects(middle):
            inside = middle
        else:
            outside = middle
    return inside


def _first(hits: dict[str, np.ndarray], lead: np.ndarray, points: np.ndarray) -> Paths:
    """The first check at which a rule held; "better" and "worse" before "non-inferior", and when both sides
    rejected at once (an empty sequence, at most alpha of the time), the side with the larger capital."""
    rows, count = next(iter(hits.values())).shape
    index = np.full(rows, count)
    for hit in hits.values():
        index = np.minimum(index, np.where(hit.any(axis=1), hit.argmax(axis=1), count))
    settled = index < count
    at = np.minimum(index, count - 1)
    pick = np.arange(rows)

    def held(name: str) -> np.ndarray:
        return settled & hits[name][pick, at] if name in hits else np.zeros(rows, bool)

    better, worse = held(BETTER), held(WORSE)
    both = better & worse
    better = (better & ~both) | (both & (lead[pick, at] >= 0))
    worse = (worse & ~both) | (both & (lead[pick, at] < 0))
    codes = np.where(better, 1, np.where(worse, 2, np.where(held(NON_INFERIOR), 3, 0)))
    return Paths(codes, np.where(settled, points[at], points[-1]))
