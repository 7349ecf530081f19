"""The evidence of a change: an e-detector over bounded values whose probability of EVER alarming without a
change is at most alpha, however long it watches.

Values v in the metric's declared range [a, b] are rescaled to x = (v - a) / (b - a) in [0, 1]; the reference r and
the margin d to m = (r - a) / (b - a) and d / (b - a). "No change" (the null) is: before every trace t, the
conditional mean of x_t given the traces before it lies in the band [lo, hi] = [m - d, m + d] (no independence,
no identical distribution, no variance assumed).

**Bettors** (testing by betting, Waudby-Smith & Ramdas 2024, *Estimating means of bounded random variables by
betting*, JRSS-B 86(1)). On the "down" side a bettor with stake lambda_t >= 0 multiplies her capital by
F_t = 1 - lambda_t (x_t - lo); on the "up" side by F_t = 1 + lambda_t (x_t - hi). The stake is chosen from the
traces before t only (predictable), and truncated so that F_t >= 1 - c (c = :data:`TRUNCATION`). Under the null
E[F_t | past] = 1 - lambda_t (E[x_t | past] - lo) <= 1 (down; likewise up): every product of factors is a
nonnegative supermartingale. There are K = len(:data:`SHIFTS`) bettors per side; bettor k aims at a change of
delta_k beyond the band edge with the growth-rate-optimal stake of a shift delta over variance s2,
lambda = delta / (s2 + delta^2) (the GRAPA form of Waudby-Smith & Ramdas 2024), s2 the running variance estimate
of every trace so far (the same prior-smoothed estimate as :mod:`ragassay.analysis.sequential`). The stake
depends on the past, never on when a change began, so every start time shares it (this is what keeps the memory
O(K)).

**E-detector with weighted starts** (Shin, Ramdas & Rinaldo 2024, *E-detectors: a nonparametric framework for
sequential change detection*, New England Journal of Statistics in Data Science 2(2), arXiv:2203.03532; their
Shiryaev-Roberts-style e-detector sums e-processes started at every time and bounds the average run length).
Here the e-process started at trace j gets the weight w_j = H / ((j + H - 1)(j + H)) (H = :data:`SCALE`), which
sums to 1 over j = 1, 2, ... (telescoping), and the detector is

    M_t(k, side) = sum_{j <= t} w_j prod_{i = j..t} F_i(k, side),   so   M_t = (M_{t-1} + w_t) F_t   (M_0 = 0)
    E_t = sum_side share_side (1/K) sum_k M_t(k, side)          alarm at the first t with E_t >= 1 / alpha

**The false-alarm bound.** Let N_t(k, side) = M_t(k, side) + sum_{j > t} w_j (the starts not yet begun, each at its
initial capital 1). Under the null, E[N_t | past] = (M_{t-1} + w_t) E[F_t | past] + sum_{j > t} w_j
<= M_{t-1} + sum_{j >= t} w_j = N_{t-1}: a nonnegative supermartingale with N_0 = sum_j w_j = 1. The average
sum_side share_side (1/K) sum_k N_t (shares summing to 1) is one too, starts at 1 and bounds E_t from above.
Ville's inequality (Ville 1939, *Etude critique de la notion de collectif*) gives
P(exists t: E_t >= 1/alpha) <= P(sup_t N_t >= 1/alpha) <= alpha: the probability of ever raising a false alarm,
over an unbounded horizon, is at most alpha. (Shin et al. weight every start by 1 and control the average run
length instead; summable weights turn that into the stronger "ever" bound, at a cost of log(1 / w_nu) in evidence
for a change at trace nu: the delay grows like 2 log(nu / H) / growth beyond H traces. No procedure with an
"ever" bound can keep a delay that does not grow at all: the start weights must sum to at most 1.)

**Delay.** After a change of delta (in rescaled units, beyond the band edge) at trace nu, the best bettor's
log-capital grows by about g = delta^2 / (2 (s2 + delta^2)) per trace, so the alarm comes after about
(log(1/alpha) + log(2K) + log(1 / (w_nu g))) / g traces; docs give simulated delays against a daily fixed window.

Pure functions over numpy arrays; :func:`first_alarms` runs many independent streams (rows) at once, with the same
step that :class:`ragassay.analysis.monitor.Detector` takes on one, where :func:`step` and :func:`evidence_of` do
those operations, in the same order, on plain floats (numpy costs more than the arithmetic on a dozen numbers).
"""

from __future__ import annotations

import math

import numpy as np

TRUNCATION = 0.5  # c: no factor below 1 - c
SHIFTS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32)  # delta_k: the changes the bettors aim at, in units of the range
SCALE = 2_000  # H: start weights are about flat over the first H traces, then fall like H / j^2
CAP = 1e200  # a mixture is held at most here: it only grows past 1/alpha after the alarm, and must stay finite
SHARES = (0.5, 0.5)  # of the evidence (and of alpha) for the down and the up side
SQUARES = tuple(shift * shift for shift in SHIFTS)  # delta_k^2
DOWN, UP = 0, 1


def start_weight(t: int, scale: int = SCALE) -> float:
    """w_t, the weight of the e-process started at trace ``t`` (1-based); sum over t >= 1 is exactly 1."""
    return scale / ((t + scale - 1) * (t + scale))


def variance(count, sum_sq):
    """The prior-smoothed variance estimate after ``count`` traces: (1/4 + sum (x_i - mu_i)^2) / (count + 1);
    a number for numbers, an array for one ``sum_sq`` per row."""
    return (0.25 + sum_sq) / (count + 1)


def caps(lo: float, hi: float) -> tuple[float, float]:
    """The largest stakes (down, up) that keep every factor >= 1 - c; with the band at the range's edge (lo = 1
    down, hi = 0 up) no value can make the factor fall below 1, so any stake is safe (the cap is infinite) and the
    bettor stakes its growth-optimal one."""
    return (TRUNCATION / (1.0 - lo) if lo < 1.0 else math.inf), (TRUNCATION / hi if hi > 0.0 else math.inf)


def stakes(var: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """The stakes lambda (rows, 2, K) of every bettor given each row's variance estimate ``var`` (rows,)."""
    raw = np.asarray(SHIFTS)[None, :] / (np.asarray(var, dtype=np.float64)[:, None] + np.asarray(SQUARES)[None, :])
    down_cap, up_cap = caps(lo, hi)
    return np.stack([np.minimum(raw, down_cap), np.minimum(raw, up_cap)], axis=1)


def factors(x: np.ndarray, stake: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """F_t (rows, 2, K) for each row's value ``x`` (rows,)."""
    x = np.asarray(x, dtype=np.float64)[:, None]
    return np.stack([1.0 - stake[:, DOWN] * (x - lo), 1.0 + stake[:, UP] * (x - hi)], axis=1)


def grow(mixture: np.ndarray, weight: float, factor: np.ndarray) -> np.ndarray:
    """M_t = (M_{t-1} + w_t) F_t, held at :data:`CAP`: far above any threshold 1/alpha, so no alarm changes, while
    a long-shifted stream's evidence (which keeps growing after its alarm) stays a finite, storable number."""
    return np.minimum((mixture + weight) * factor, CAP)


def evidence(mixture: np.ndarray) -> np.ndarray:
    """E_t (rows,) from the mixtures M_t (rows, 2, K)."""
    return (np.asarray(SHARES)[None, :] * mixture.mean(axis=2)).sum(axis=1)


def step(mixture: list[list[float]], var: float, x: float, lo: float, hi: float, weight: float) -> tuple:
    """One trace of one stream in plain floats: (F_t, M_t), each [down, up] lists of K, for the value ``x`` given
    the variance estimate ``var`` and the mixtures M_{t-1}; :func:`stakes`, :func:`factors` and :func:`grow` on
    one row, the same operations in the same order (so the same numbers to the last bit)."""
    down_cap, up_cap = caps(lo, hi)
    below, above = x - lo, x - hi
    down, up, grown_down, grown_up = [], [], [], []
    for shift, square, before_down, before_up in zip(SHIFTS, SQUARES, *mixture):
        stake = shift / (var + square)
        down.append(1.0 - (down_cap if stake > down_cap else stake) * below)  # np.minimum's (NaN kept)
        up.append(1.0 + (up_cap if stake > up_cap else stake) * above)
        grown = (before_down + weight) * down[-1]
        grown_down.append(CAP if grown > CAP else grown)
        grown = (before_up + weight) * up[-1]
        grown_up.append(CAP if grown > CAP else grown)
    return [down, up], [grown_down, grown_up]


def evidence_of(mixture: list[list[float]]) -> float:
    """E_t of one stream from its mixtures ([down, up] lists of K): :func:`evidence` on one row, summed in numpy's
    order (left to right: numpy sums fewer than 8 numbers one after another)."""
    total = 0.0
    for share, row in zip(SHARES, mixture):
        summed = 0.0
        for value in row:
            summed += value
        total += share * (summed / len(row))
    return total


def moments_after(count: int, total, sum_sq, x):
    """The running sums (``total``, ``sum_sq``) after adding trace number ``count`` (1-based) with value ``x``;
    numbers or one per row alike."""
    total = total + x
    return total, sum_sq + (x - (0.5 + total) / (count + 1)) ** 2


def first_alarms(x: np.ndarray, reference: float, alpha: float, margin: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``x`` (rows, n; values in [0, 1], reference and margin in the same units): the 0-based index
    of the trace at which the detector alarms (-1 when it never does) and the side (:data:`DOWN` / :data:`UP`,
    -1 when none). The same steps as :class:`ragassay.analysis.monitor.Detector`."""
    x = np.asarray(x, dtype=np.float64)
    rows, n = x.shape
    lo, hi = reference - margin, reference + margin
    mixture = np.zeros((rows, 2, len(SHIFTS)))
    total, sum_sq = np.zeros(rows), np.zeros(rows)
    fired, side = np.full(rows, -1), np.full(rows, -1)
    threshold = 1.0 / alpha
    for t in range(n):
        factor = factors(x[:, t], stakes(variance(t, sum_sq), lo, hi), lo, hi)
        mixture = grow(mixture, start_weight(t + 1), factor)
        hit = (evidence(mixture) >= threshold) & (fired < 0)
        if hit.any():
            fired[hit] = t
            side[hit] = np.argmax(mixture.mean(axis=2)[hit] * np.asarray(SHARES), axis=1)
        total, sum_sq = moments_after(t + 1, total, sum_sq, x[:, t])
    return fired, side
