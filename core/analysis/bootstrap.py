"""All resampling in ragassay: one seeded generator, bootstrap intervals of a mean (in Unitxt's scheme), of a
difference between two independent groups, and of quantiles.

Every caller draws from :func:`generator` (the paired sign-flip test of :mod:`.paired` too), so the same seed
gives the same numbers in every process. What is here:

- :func:`bootstrap_mean_ci`: the mean of each metric with its BCa (or percentile) interval, Unitxt's scheme below;
- :func:`difference_ci`: mean(first) - mean(second) of two independent groups, BCa (GRAMMAR hypotheses);
- :func:`quantile_ci`: a quantile (latency p50/p95/p99) with its percentile-bootstrap interval.

The mean's scheme, in detail (scipy.stats.bootstrap, BCa, as Unitxt calls it):

Unitxt 1.26 gives an instance metric's global score as the mean of its instance scores, NaN ignored, with a
95% interval from ``scipy.stats.bootstrap((instances,), nanmean, n_resamples=1000, method="BCa",
random_state=np.random.default_rng(hash(seed) & (2**32 - 1)))``, seed 42 (``unitxt/metrics.py``,
``MetricWithConfidenceInterval.score_based_confidence_interval``). This module reproduces that scheme, the
random stream included, without a Python call per resample. With x_1..x_n the instance scores (NaN =
unscored), S their sum and m their count over the scored ones, and B resamples:

1. **Resamples** (scipy ``_bootstrap_resample``): one generator draws ``integers(0, n, (B, n))``; resample b
   takes instance i c_bi times. Its statistic is theta*_b = sum_i c_bi x_i / sum_i c_bi [x_i scored], computed
   for every metric at once as (counts @ values) / (counts @ scored), in row batches whose draws continue the
   same stream (never a B x n float matrix per metric). The few theta*_b within rounding distance of theta
   are recomputed as ``numpy.nanmean`` of the drawn values in draw order, as scipy does, so that the ties
   counted in z0 (step 4) are scipy's: discrete scores (0/1, MAP, F1) often tie with the mean exactly.
2. **Unscorable resamples** (Unitxt ``resample_from_non_nan``): a resample that drew only NaN has theta*_b =
   NaN; those are replaced, in order, by ``default_rng(seed).choice(non-NaN theta*, count, replace=True)``.
3. **Percentile interval**: the alpha and 1 - alpha quantiles of theta*, alpha = (1 - level) / 2.
4. **BCa interval** (Efron & Tibshirani 1993, An Introduction to the Bootstrap, section 14.3, Eq. 14.9,
   14.14 and 14.15, with scipy's mid-rank z0 and (n - 1)-scaled jackknife of ``_bca_interval``)::

       z0 = Phi^-1( (#{theta*_b < theta} + #{theta*_b <= theta}) / 2B ),     theta = S / m
       jackknife: theta_(i) = (S - x_i) / (m - 1) for a scored x_i, S / m for a NaN x_i, so theta_(.) = S / m
       U_i = (n - 1) (theta_(.) - theta_(i)) = (n - 1) / (m - 1) * (x_i - S/m)        (0 for a NaN x_i)
       a = (sum U_i^3 / n^3) / (6 (sum U_i^2 / n^2)^(3/2)) = sum d_i^3 / (6 (sum d_i^2)^(3/2)),  d_i = x_i - S/m
       alpha_1 = Phi(z0 + (z0 + z_alpha) / (1 - a (z0 + z_alpha))),  alpha_2 likewise with z_(1-alpha)

   and the interval is the alpha_1 and alpha_2 quantiles of theta* (``scipy.stats.quantile``, 'linear', as
   ``numpy.quantile``). The closed-form jackknife makes this O(n) where scipy's is O(n^2).

Unitxt gives no interval for fewer than 2 instances, n_resamples None or at most 1, or when every scored value
is equal (it compares with ``is not np.nan``; here NaN is simply unscored). An interval that comes out NaN
(a degenerate bootstrap distribution) is reported as missing with that reason, never as a number.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from collections.abc import Iterator

import numpy as np

UNITXT_SEED = 42
BATCH_ELEMENTS = 1 << 20  # indices drawn per batch: rows = max(1, BATCH_ELEMENTS // n)
_SEED_MASK = 2**32 - 1
METHODS = {"bca": "BCa", "percentile": "percentile"}


@dataclasses.dataclass(frozen=True)
class MeanInterval:
    """One metric's mean over its scored instances and its bootstrap confidence interval.

    ``ci_low``/``ci_high`` are None exactly when ``reason`` says why there is no interval (where Unitxt
    omits its ``_ci_low``/``_ci_high`` keys, or the interval is degenerate); ``mean`` is None when no
    instance is scored.
    """

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int  # instances, unscored (NaN) ones included
    n_scored: int  # instances with a score
    reason: str | None = None  # why there is no interval; None when there is one


def generator(seed: int = UNITXT_SEED) -> np.random.Generator:
    """The one generator of every random draw: ``np.random.default_rng(hash(seed) & (2**32 - 1))``, the
    generator Unitxt seeds for its bootstraps (for a small non-negative integer seed, ``default_rng(seed)``).

    Only integer seeds: the hash of a string changes with PYTHONHASHSEED, so it would not be reproducible.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"bootstrap seed must be an integer, got {seed!r}")
    return np.random.default_rng(hash(int(seed)) & _SEED_MASK)


unitxt_generator = generator  # the name Unitxt's scheme is documented under


def resample_indices(n: int, n_resamples: int, seed: int = UNITXT_SEED) -> Iterator[np.ndarray]:
    """Yield the bootstrap resamples of ``n`` instances as (rows, n) int64 index arrays, in row batches.

    Together the batches are exactly the resamples of ``scipy.stats.bootstrap`` with Unitxt's generator: they
    draw ``integers(0, n, (rows, n))`` one after another from one generator, which continues the stream of a
    single ``(n_resamples, n)`` draw. A batch holds about ``BATCH_ELEMENTS`` indices.

    The draws of the last :data:`DRAWS_KEPT` (n, n_resamples, seed) are kept (compactly, when they take at most
    :data:`DRAWS_KEPT_BYTES`): every interval of one run over the same samples (each metric's, each latency
    quantile's, each page's) uses the same resamples, so they are drawn once. The indices are the same either way.
    """
    rng = generator(seed)
    rows = max(1, BATCH_ELEMENTS // max(n, 1))
    kept = _kept_draws(rng, n, n_resamples, seed, rows)
    for start in range(0, n_resamples, rows):
        if kept is not None:
            yield kept[start : start + rows].astype(np.int64)
        else:
            yield rng.integers(0, n, (min(rows, n_resamples - start), n))


DRAWS_KEPT = 2  # (n, n_resamples, seed) whose resample indices are kept
DRAWS_KEPT_BYTES = 32 << 20  # the most one kept draw may take (as uint16 or uint32 indices)
_kept: collections.OrderedDict[tuple[int, int, int], np.ndarray] = collections.OrderedDict()
_kept_lock = threading.Lock()


def _kept_draws(rng: np.random.Generator, n: int, n_resamples: int, seed: int, rows: int) -> np.ndarray | None:
    """Every index of the resamples (n_resamples x n, uint16/uint32), drawn by ``rng`` in ``rows`` batches or
    kept from an earlier call; None when too large to keep (then the caller draws batch by batch)."""
    dtype = np.uint16 if n <= 1 << 16 else np.uint32
    if n_resamples * n * np.dtype(dtype).itemsize > DRAWS_KEPT_BYTES or n_resamples <= 0:
        return None
    key = (n, n_resamples, int(seed))
    with _kept_lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    drawn = np.empty((n_resamples, n), dtype=dtype)
    for start in range(0, n_resamples, rows):
        drawn[start : start + rows] = rng.integers(0, n, (min(rows, n_resamples - start), n))
    drawn.setflags(write=False)
    with _kept_lock:
        _kept[key] = drawn
        while len(_kept) > DRAWS_KEPT:
            _kept.popitem(last=False)
    return drawn


def counts_of(index: np.ndarray, n: int, dtype: type = np.float64) -> np.ndarray:
    """The (rows, n) counts of an index batch (float64 unless ``dtype``): entry [b, i] = how often resample b
    drew instance i.

    Any statistic linear in the counts (sums, means, differences of paired scores) is then a matrix product.
    """
    counts = np.empty((len(index), n), dtype=dtype)
    for row, drawn in zip(counts, index):
        row[:] = np.bincount(drawn, minlength=n)  # one row at a time: its counts stay in cache
    return counts


def resample_means(
    columns: np.ndarray, n_resamples: int, seed: int = UNITXT_SEED, *, centres: np.ndarray | None = None
) -> np.ndarray:
    """The NaN-ignoring mean of every column of ``columns`` (n x M) in each resample: an (n_resamples, M) array.

    One matrix product per batch gives every column's sum and, for columns with NaN, its scored count; a
    resample that drew no scored value of a column is NaN there. With ``centres`` (one value per column), a
    resample mean within rounding distance of its centre is recomputed as ``numpy.nanmean`` of the drawn
    values in draw order, as scipy computes it, so comparisons with the centre (BCa's z0) agree bit for bit.
    """
    n, width = columns.shape
    scored = ~np.isnan(columns)
    with_nan = np.flatnonzero(~scored.all(axis=0))
    weights = np.hstack([np.where(scored, columns, 0.0), scored[:, with_nan].astype(np.float64)])
    means = np.empty((n_resamples, width))
    if centres is not None:
        # two ways of summing n values differ by at most about n * eps * max|x| each; the band is wider
        tolerances = 4 * (n + 2) * np.finfo(np.float64).eps * np.nanmax(np.abs(columns), axis=0, initial=0.0)
    start = 0
    for index in resample_indices(n, n_resamples, seed):
        products = counts_of(index, n) @ weights
        drawn = np.full((len(index), width), float(n))
        drawn[:, with_nan] = products[:, width:]
        with np.errstate(invalid="ignore", divide="ignore"):
            batch = products[:, :width] / drawn
        if centres is not None:
            _recompute_near(batch, columns, index, centres, tolerances)
        means[start : start + len(index)] = batch
        start += len(index)
    return means


def _recompute_near(
    batch: np.ndarray, columns: np.ndarray, index: np.ndarray, centres: np.ndarray, tolerances: np.ndarray
) -> None:
    """Recompute in place, as scipy does, the resample means within ``tolerances`` of their column's centre."""
    for j, (centre, tolerance) in enumerate(zip(centres, tolerances)):
        rows = np.flatnonzero(np.abs(batch[:, j] - centre) <= tolerance)
        if len(rows):
            batch[rows, j] = np.nanmean(columns[index[rows], j], axis=1)  # each row drew a scored value


def bootstrap_mean_ci(
    values,
    *,
    n_resamples: int | None = 1000,
    confidence_level: float = 0.95,
    seed: int = UNITXT_SEED,
    method: str = "BCa",
) -> MeanInterval | list[MeanInterval]:
    """Mean and bootstrap confidence interval of each metric, as Unitxt 1.26 computes them.

    ``values`` is 1-D (one metric's instance scores) or 2-D (n instances x M metrics), NaN for unscored.
    Returns one :class:`MeanInterval` for 1-D input, else a list with one per column. Every column uses the
    same resamples (Unitxt seeds a fresh generator per metric the same way). ``method`` is "BCa" (Unitxt's
    default) or "percentile"; the same ``seed`` always gives the same intervals.
    """
    method_key = _check_arguments(n_resamples, confidence_level, method)
    generator(seed)  # validates the seed before any work
    columns = _as_columns(values)
    n = columns.shape[0]
    reasons = [_no_interval_reason(column, n, n_resamples) for column in columns.T]
    means = [_nanmean(column) for column in columns.T]
    wanted = [j for j, reason in enumerate(reasons) if reason is None]
    results = [MeanInterval(means[j], None, None, n, _scored(columns[:, j]), reasons[j]) for j in range(len(reasons))]
    if wanted:
        theta_b = resample_means(columns[:, wanted], n_resamples, seed, centres=np.array([means[j] for j in wanted]))
        for k, j in enumerate(wanted):
            low, high, reason = _interval(columns[:, j], means[j], theta_b[:, k], confidence_level, seed, method_key)
            results[j] = dataclasses.replace(results[j], ci_low=low, ci_high=high, reason=reason)
    return results[0] if np.ndim(values) == 1 else results


def _check_arguments(n_resamples: int | None, confidence_level: float, method: str) -> str:
    if n_resamples is not None and (isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer))):
        raise ValueError(f"n_resamples must be an integer or None, got {n_resamples!r}")
    if not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be between 0 and 1 (exclusive), got {confidence_level!r}")
    key = str(method).lower()
    if key not in METHODS:
        raise ValueError(f"bootstrap method must be one of {', '.join(METHODS.values())}, got {method!r}")
    return key


def _as_columns(values) -> np.ndarray:
    columns = np.asarray(values, dtype=np.float64)
    if columns.ndim not in (1, 2):
        raise ValueError(f"values must be 1-D (instances) or 2-D (instances x metrics), got shape {columns.shape}")
    if np.isinf(columns).any():
        raise ValueError("values contain an infinite score; a mean and its interval need finite scores or NaN")
    return columns[:, None] if columns.ndim == 1 else columns


def _scored(column: np.ndarray) -> int:
    return int(np.count_nonzero(~np.isnan(column)))


def _nanmean(column: np.ndarray) -> float | None:
    return float(np.nanmean(column)) if _scored(column) else None


def _no_interval_reason(column: np.ndarray, n: int, n_resamples: int | None) -> str | None:
    """Why Unitxt gives this column no interval, or None when it gives one."""
    if n_resamples is None or n_resamples <= 1:
        return f"no resampling (n_resamples={n_resamples})"
    if n < 2:
        return f"fewer than 2 instances ({n})"
    scored = column[~np.isnan(column)]
    if not len(scored):
        return "no scored instance"
    if np.all(scored == scored[0]):
        return "every scored instance has the same value"
    return None


def _interval(
    column: np.ndarray, theta_hat: float, theta_b: np.ndarray, confidence_level: float, seed: int, method: str
) -> tuple[float | None, float | None, str | None]:
    """(low, high, reason) of one column from its resample means ``theta_b``."""
    theta_b = _replace_unscorable(theta_b, seed)
    alpha = (1 - confidence_level) / 2
    if method == "bca":
        levels = _bca_levels(column, theta_hat, theta_b, alpha)
    else:
        levels = (alpha, 1 - alpha)
    if not np.all(np.isfinite(levels)):
        return None, None, "degenerate bootstrap distribution: the BCa interval is undefined"
    low, high = np.quantile(theta_b, levels)
    if not (np.isfinite(low) and np.isfinite(high)):
        return None, None, "degenerate bootstrap distribution: no resample could be scored"
    return float(low), float(high), None


def _replace_unscorable(theta_b: np.ndarray, seed: int) -> np.ndarray:
    """Unitxt's ``resample_from_non_nan``: NaN resample means replaced by draws from the other ones."""
    missing = np.isnan(theta_b)
    count = int(missing.sum())
    if 0 < count < len(theta_b):
        theta_b = theta_b.copy()
        theta_b[missing] = generator(seed).choice(theta_b[~missing], count, replace=True)
    return theta_b


def _bca_levels(column: np.ndarray, theta_hat: float, theta_b: np.ndarray, alpha: float) -> tuple[float, float]:
    """The BCa quantile levels alpha_1, alpha_2 (module docstring, step 4)."""
    from scipy.special import ndtr, ndtri

    below = np.count_nonzero(theta_b < theta_hat) + np.count_nonzero(theta_b <= theta_hat)
    z0 = ndtri(below / (2 * len(theta_b)))
    deviations = column[~np.isnan(column)] - theta_hat
    acceleration = np.sum(deviations**3) / (6 * np.sum(deviations**2) ** 1.5)
    z_alpha = float(ndtri(alpha))
    levels = []
    for z in (z_alpha, -z_alpha):
        with np.errstate(invalid="ignore", divide="ignore"):
            levels.append(float(ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))))
    return levels[0], levels[1]


# -- two independent groups -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DifferenceInterval:
    """mean(first) - mean(second) of two independent groups and its bootstrap interval (None with ``reason``)."""

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    n_first: int
    n_second: int
    reason: str | None = None


def difference_ci(
    first, second, *, n_resamples: int = 1000, confidence_level: float = 0.95, seed: int = 0
) -> DifferenceInterval:
    """BCa bootstrap interval of mean(first) - mean(second), each group resampled on its own (an unpaired design).

    With a = first, b = second and theta = mean(a) - mean(b), resample b draws ``integers(0, n_a, (B, n_a))`` then
    ``integers(0, n_b, (B, n_b))`` from :func:`generator`; z0 as for the mean, and the acceleration from the
    jackknife of both groups (scipy's multi-sample BCa; Efron & Tibshirani 1993, section 14.3)::

        a_hat = (sum (a_i - mean a)^3 / n_a^3 - sum (b_i - mean b)^3 / n_b^3)
                / (6 (sum (a_i - mean a)^2 / n_a^2 + sum (b_i - mean b)^2 / n_b^2)^(3/2))

    No interval (``reason`` says why) for fewer than 2 values in a group or no variation within either group.
    """
    _check_arguments(n_resamples, confidence_level, "BCa")
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    difference = float(a.mean() - b.mean()) if len(a) and len(b) else None
    if min(len(a), len(b)) < 2:
        return DifferenceInterval(
            difference, None, None, len(a), len(b), f"fewer than 2 values in a group ({len(a)} and {len(b)})"
        )
    if np.all(a == a[0]) and np.all(b == b[0]):
        reason = "no variation within either group: the bootstrap cannot estimate an interval"
        return DifferenceInterval(difference, None, None, len(a), len(b), reason)
    rng = generator(seed)
    theta_b = _group_means(a, n_resamples, rng) - _group_means(b, n_resamples, rng)
    alpha = (1 - confidence_level) / 2
    levels = _two_group_levels(a, b, difference, theta_b, alpha)
    if not np.all(np.isfinite(levels)):
        reason = "degenerate bootstrap distribution: the BCa interval is undefined"
        return DifferenceInterval(difference, None, None, len(a), len(b), reason)
    low, high = np.quantile(theta_b, levels)
    return DifferenceInterval(difference, float(low), float(high), len(a), len(b))


def _group_means(values: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The mean of each of ``n_resamples`` resamples of ``values``, in row batches from ``rng``."""
    n = len(values)
    rows, means = max(1, BATCH_ELEMENTS // n), np.empty(n_resamples)
    for start in range(0, n_resamples, rows):
        index = rng.integers(0, n, (min(rows, n_resamples - start), n))
        means[start : start + len(index)] = counts_of(index, n) @ values / n
    return means


def _two_group_levels(a: np.ndarray, b: np.ndarray, theta: float, theta_b: np.ndarray, alpha: float):
    from scipy.special import ndtr, ndtri

    below = np.count_nonzero(theta_b < theta) + np.count_nonzero(theta_b <= theta)
    z0 = ndtri(below / (2 * len(theta_b)))
    da, db = a - a.mean(), b - b.mean()
    numerator = np.sum(da**3) / len(a) ** 3 - np.sum(db**3) / len(b) ** 3
    denominator = np.sum(da**2) / len(a) ** 2 + np.sum(db**2) / len(b) ** 2
    acceleration = numerator / (6 * denominator**1.5)
    z_alpha = float(ndtri(alpha))
    with np.errstate(invalid="ignore", divide="ignore"):
        return [float(ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))) for z in (z_alpha, -z_alpha)]


# -- quantiles ------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class QuantileInterval:
    """One quantile of a sample (``numpy.quantile``, linear) and its percentile-bootstrap interval."""

    q: float
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    reason: str | None = None


def quantile_ci(
    values, qs=(0.5, 0.95, 0.99), *, n_resamples: int = 1000, confidence_level: float = 0.95, seed: int = 0
) -> list[QuantileInterval]:
    """Each quantile ``q`` of ``values`` with a percentile-bootstrap interval (Efron & Tibshirani 1993, section
    13.3): the (1 - level)/2 and (1 + level)/2 quantiles of the resampled quantiles. Percentile, not BCa: the
    jackknife behind BCa's acceleration is inconsistent for quantiles. A resample's quantile is read from the
    running counts of the sorted values (no sort per resample). Fewer than 2 values: no interval."""
    _check_arguments(n_resamples, confidence_level, "percentile")
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = len(x)
    if n < 2:
        value = float(x[0]) if n else None
        return [QuantileInterval(q, value, None, None, n, f"fewer than 2 values ({n})") for q in qs]
    draws = np.empty((n_resamples, len(qs)))
    start = 0
    for index in resample_indices(n, n_resamples, seed):
        running = np.cumsum(counts_of(index, n, np.int64), axis=1)  # exact, as in float64, and faster
        for j, q in enumerate(qs):
            draws[start : start + len(index), j] = _resampled_quantile(x, running, q)
        start += len(index)
    tail = (1 - confidence_level) / 2
    results = []
    for j, q in enumerate(qs):
        low, high = np.quantile(draws[:, j], [tail, 1 - tail])
        results.append(QuantileInterval(q, float(np.quantile(x, q)), float(low), float(high), n))
    return results


def _resampled_quantile(x: np.ndarray, running: np.ndarray, q: float) -> np.ndarray:
    """numpy's linear quantile of each resample, given the running counts of the sorted values ``x``."""
    position = (len(x) - 1) * q
    below = int(np.floor(position))
    lower = x[np.argmax(running > below, axis=1)]
    upper = x[np.argmax(running > min(below + 1, len(x) - 1), axis=1)]
    return lower + (position - below) * (upper - lower)


# -- any statistic of weighted observations -------------------------------------------------------------------


def weighted_statistic_ci(
    statistic, n: int, *, n_resamples: int = 2000, confidence_level: float = 0.95, seed: int = 0, bounds=None
) -> tuple[float, float] | None:
    """Percentile-bootstrap interval (Efron & Tibshirani 1993, section 13.3) of any statistic of n observations.

    ``statistic(weights)`` takes a (rows, n) array, row b holding how often resample b drew each observation
    (:func:`counts_of` of :func:`resample_indices`), and returns one value per row, NaN where the statistic is
    undefined for that resample; the point estimate is ``statistic(ones((1, n)))``. Resamples where it is undefined
    are left out; the interval is the (1 - level)/2 and (1 + level)/2 quantiles of the others, clipped to ``bounds``
    (low, high) when given. None when n < 2, n_resamples < 2 or no resample is defined.
    """
    _check_arguments(n_resamples, confidence_level, "percentile")
    if n < 2 or n_resamples < 2:
        return None
    values = np.concatenate([statistic(counts_of(index, n)) for index in resample_indices(n, n_resamples, seed)])
    values = values[np.isfinite(values)]
    if not len(values):
        return None
    tail = (1 - confidence_level) / 2
    low, high = (float(v) for v in np.quantile(values, [tail, 1 - tail]))
    if bounds is not None:
        low, high = max(bounds[0], low), min(bounds[1], high)
    return low, high
