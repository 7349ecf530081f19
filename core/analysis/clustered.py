"""Turns that are not independent: the clusters of a sample order, the cluster bootstrap of means, and the
per-cluster spread that power figures use.

A conversation's turns share their user, their topic and the system's state, so their scores are correlated;
the unit that can be treated as independent is the **cluster** (:attr:`ragassay.models.Sample.cluster`: the
conversation of a turn, else the sample itself). Every interval on turn-level values then resamples whole
clusters (Cameron & Miller 2015, *A Practitioner's Guide to Cluster-Robust Inference*, J. Human Resources 50(2),
sections II and VI; Davison & Hinkley 1997, *Bootstrap Methods and their Application*, section 3.8: resampling
the top level of a two-level design).

**The estimand** is the turn-weighted mean: with cluster c holding n_c scored values summing to S_c,
theta = sum_c S_c / sum_c n_c, the mean over every scored turn, as for independent samples.

**The cluster bootstrap** (:func:`cluster_mean_ci`): a resample draws M clusters with replacement out of the M
(one seeded generator, :func:`ragassay.analysis.bootstrap.resample_indices` over cluster indices), and its
statistic is theta* = sum_b S_(c_b) / sum_b n_(c_b); the interval is BCa (Efron & Tibshirani 1993, section
14.3) with z0 from the resamples (mid-rank, as scipy) and the acceleration from the delete-one-cluster
jackknife theta_(c) = (S - S_c) / (N - n_c). With every cluster a single sample the callers use
:func:`ragassay.analysis.bootstrap.bootstrap_mean_ci` itself, so nothing changes for independent samples.

**The per-cluster spread** (:func:`unit_spread`): linearising the ratio estimator, theta_hat - theta is about
(M / N) times the mean over clusters of u_c = S_c - n_c theta (Cameron & Miller 2015, section II.C: the
cluster-robust variance sum_c u_c^2 / N^2, with the M / (M - 1) small-sample factor). So the turn-weighted mean
behaves like the mean of M independent units whose standard deviation is s_unit = sd(u_c) * M / N, and the
power formulas of :mod:`.power` apply with M units and s_unit (for single samples: M = N, u_i = x_i - mean, so
s_unit is the ordinary SD).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .bootstrap import MeanInterval, bootstrap_mean_ci, counts_of, resample_indices

UNIT = "conversation"  # what a cluster is called to people


@dataclasses.dataclass(frozen=True)
class Clusters:
    """The clusters of one sample order: ``codes[i]`` is the cluster index of sample i (0..M-1, in order of
    first appearance), ``labels`` the cluster names."""

    codes: np.ndarray
    labels: list[str]

    @property
    def count(self) -> int:
        return len(self.labels)

    @property
    def singletons(self) -> bool:
        """Whether every cluster holds one sample (independent samples: nothing to cluster)."""
        return len(self.labels) == len(self.codes)

    def among(self, mask: np.ndarray) -> int:
        """How many clusters hold at least one of the samples ``mask`` selects."""
        return int(len(np.unique(self.codes[mask])))


def no_variation(values: np.ndarray) -> bool:
    """Whether ``values`` spread no more than rounding: every value within a few ulps of the largest |value|."""
    if len(values) < 2:
        return True
    scale = float(np.max(np.abs(values)))
    return float(np.max(values) - np.min(values)) <= 8 * len(values) * np.finfo(np.float64).eps * scale


def spread(values: np.ndarray) -> float | None:
    """The sample standard deviation (n - 1), or None for fewer than 2 values or no variation beyond rounding."""
    return None if no_variation(values) else float(np.std(values, ddof=1))


def clusters_of(labels: Sequence[str] | np.ndarray | None, n: int | None = None) -> Clusters:
    """The :class:`Clusters` of per-sample cluster ``labels`` (None: ``n`` samples, each its own)."""
    if labels is None:
        if n is None:
            raise ValueError("clusters_of needs labels or a sample count")
        return Clusters(np.arange(n), [str(i) for i in range(n)])
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(label, len(index)) for label in labels), dtype=np.int64, count=len(labels))
    return Clusters(codes, list(index))


def cluster_sums(values: np.ndarray, codes: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums of the scored values of each column of ``values`` (n x K, NaN = unscored) and their
    scored counts: two (count x K) arrays."""
    columns = values[:, None] if values.ndim == 1 else values
    scored = ~np.isnan(columns)
    sums = np.zeros((count, columns.shape[1]))
    sizes = np.zeros((count, columns.shape[1]))
    np.add.at(sums, codes, np.where(scored, columns, 0.0))
    np.add.at(sizes, codes, scored.astype(np.float64))
    return sums, sizes


def unit_spread(values: np.ndarray, codes: np.ndarray | None) -> tuple[float | None, int]:
    """(s_unit, M) of the scored ``values`` (module docstring): the standard deviation of a cluster's
    contribution to the turn-weighted mean, in the values' units, and the number of clusters holding a scored
    value. None when fewer than 2 clusters or no variation beyond rounding. ``codes`` None: independent samples
    (then s_unit is the ordinary SD)."""
    scored = ~np.isnan(values)
    if codes is None:
        return spread(values[scored]), int(scored.sum())
    present, local = np.unique(codes[scored], return_inverse=True)
    if len(present) == int(scored.sum()):
        return spread(values[scored]), len(present)
    sums, sizes = cluster_sums(values[scored], local, len(present))
    mean = sums.sum() / sizes.sum()
    u = sums[:, 0] - sizes[:, 0] * mean
    sd = spread(u)
    return (None if sd is None else float(sd * len(present) / sizes.sum())), len(present)


def cluster_mean_ci(
    values, clusters: Clusters, *, n_resamples: int = 1000, confidence_level: float = 0.95, seed: int = 0
) -> list[MeanInterval]:
    """Each column's turn-weighted mean with its cluster-bootstrap BCa interval (module docstring).

    ``values`` is n x K (NaN = unscored) in the order of ``clusters.codes``. With every cluster a single sample
    this is :func:`ragassay.analysis.bootstrap.bootstrap_mean_ci` exactly. No interval (``reason``) with fewer
    than 2 clusters holding a scored value, or when every scored value is equal.
    """
    columns = np.asarray(values, dtype=np.float64)
    columns = columns[:, None] if columns.ndim == 1 else columns
    if clusters.singletons:
        return bootstrap_mean_ci(columns, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
    sums, sizes = cluster_sums(columns, clusters.codes, clusters.count)
    results = []
    wanted = []
    for j in range(columns.shape[1]):
        result, ok = _no_cluster_interval(columns[:, j], sizes[:, j])
        results.append(result)
        if ok:
            wanted.append(j)
    if wanted:
        draws = _resampled_ratios(sums[:, wanted], sizes[:, wanted], n_resamples, seed)
        for k, j in enumerate(wanted):
            low, high, reason = _bca(sums[:, j], sizes[:, j], draws[:, k], confidence_level)
            results[j] = dataclasses.replace(results[j], ci_low=low, ci_high=high, reason=reason)
    return results


def _no_cluster_interval(column: np.ndarray, sizes: np.ndarray) -> tuple[MeanInterval, bool]:
    scored = column[~np.isnan(column)]
    mean = float(scored.mean()) if len(scored) else None
    base = MeanInterval(mean, None, None, len(column), len(scored))
    holding = int(np.count_nonzero(sizes))
    if not len(scored):
        return dataclasses.replace(base, reason="no scored instance"), False
    if holding < 2:
        return dataclasses.replace(base, reason=f"fewer than 2 {UNIT}s with a scored value ({holding})"), False
    if np.all(scored == scored[0]):
        return dataclasses.replace(base, reason="every scored instance has the same value"), False
    return base, True


def _resampled_ratios(sums: np.ndarray, sizes: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """theta* of each resample of the M clusters and each column: (n_resamples, K), NaN where a resample drew
    no scored value."""
    m = sums.shape[0]
    weights = np.hstack([sums, sizes])
    width = sums.shape[1]
    out = np.empty((n_resamples, width))
    start = 0
    for index in resample_indices(m, n_resamples, seed):
        products = counts_of(index, m) @ weights
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + len(index)] = products[:, :width] / products[:, width:]
        start += len(index)
    return out


def _bca(sums: np.ndarray, sizes: np.ndarray, draws: np.ndarray, level: float):
    """The BCa interval from the cluster resamples and the delete-one-cluster jackknife."""
    from scipy.special import ndtr, ndtri

    draws = draws[np.isfinite(draws)]
    if len(draws) < 2:
        return None, None, "degenerate bootstrap distribution: no resample could be scored"
    held = sizes > 0
    s, n = sums[held], sizes[held]
    theta = float(s.sum() / n.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        jack = (s.sum() - s) / (n.sum() - n)
    jack = jack[np.isfinite(jack)]
    deviations = jack.mean() - jack
    denominator = 6 * np.sum(deviations**2) ** 1.5
    acceleration = float(np.sum(deviations**3) / denominator) if denominator > 0 else 0.0
    below = np.count_nonzero(draws < theta) + np.count_nonzero(draws <= theta)
    z0 = ndtri(below / (2 * len(draws)))
    z_alpha = float(ndtri((1 - level) / 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        levels = [float(ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))) for z in (z_alpha, -z_alpha)]
    if not np.all(np.isfinite(levels)):
        return None, None, "degenerate bootstrap distribution: the BCa interval is undefined"
    low, high = np.quantile(draws, levels)
    return float(low), float(high), None


def turns_in(n: int, clusters: int | None) -> str:
    """``n`` in words for people: "N turns in M conversations" when the samples are clustered (fewer clusters
    than samples), else just N."""
    if clusters is None or clusters >= n:
        return str(n)
    return f"{n} turn{'s' if n != 1 else ''} in {clusters} {UNIT}{'s' if clusters != 1 else ''}"
