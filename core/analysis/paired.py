"""The paired procedure: one sign-flip permutation test per pair, and the interval that inverts it.

Two systems scored on the same n samples give the differences d_1..d_n (candidate - baseline). The test of
"the difference is delta" is the two-sided sign-flip permutation test of the shifted differences x_i = d_i - delta
(P. Good 2005, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed., section 3.1.1; Efron &
Tibshirani 1993, section 15.2): under the null each x_i is as likely to be -x_i, so with a sign vector e
(e_i = +-1) the permuted statistic is |sum e_i x_i| and

    p(delta) = #{e : |sum e_i (d_i - delta)| >= |sum (d_i - delta)|} / N

over all N = 2^n sign vectors when n <= :data:`EXACT_MAX`, else over the identity and B = :data:`FLIPS` random
sign vectors from one seeded generator (N = B + 1, the "+1" of Phipson & Smyth 2010, so p is never 0).

**The interval is the set of delta the test does not reject** (confidence-set inversion, Lehmann & Romano 2005,
*Testing Statistical Hypotheses*, 3rd ed., section 3.5). For one sign vector, let K and F be the samples it keeps
and flips, with means m_K and m_F of d. Writing a = sum_K (d_i - delta) and b = sum_F (d_i - delta), the vector
counts as extreme exactly when |a - b| >= |a + b|, i.e. a b <= 0, i.e.

    min(m_K, m_F) <= delta <= max(m_K, m_F)          (the whole line when K or F is empty)

Every such interval contains the mean difference mean(d) (a weighted average of m_K and m_F), so the count
C(delta) of intervals covering delta rises to mean(d) and falls after it, and the accepted set
{delta : C(delta) / N > level} is one interval: [k-th smallest lower end, k-th largest upper end] with
k = floor(level N) + 1. The same counts give the p-value (C(0) / N), so **the test rejects delta = 0 exactly when
the interval excludes 0**, by construction, in every case: the verdict and the interval cannot disagree.

**Holm at the adjusted level** (Holm 1979): a family of m comparisons is tested step-down; comparison (i) in the
order of p-values is tested at level alpha / (m - i + 1) while every earlier one was rejected, and after the
first non-rejection every later one keeps that step's level (where it cannot be rejected either). Each interval
is reported at its comparison's level, so "better"/"worse" is exactly "the reported interval excludes 0".

**Tarone's reduction** (Tarone 1990, Biometrics 46, *A modified Bonferroni method for discrete data*): the test is
discrete, and with few differing samples its smallest attainable p-value p_min = #{e constant on the non-zero
x_i} / N (2^(1 - n_discordant) exactly) may exceed any level it could be tested at. With K the smallest k such
that #{p_min <= alpha / k} <= k, comparisons with p_min > alpha / K leave the family before Holm runs: they could
never be rejected, and they would only dilute the others. p_min depends only on |x_i|, on which the sign-flip
test conditions, so removing them keeps the family-wise error at most alpha.

**Clusters** (turns of one conversation are not independent; :attr:`ragassay.models.Sample.cluster`). With M
clusters, cluster c holding n_c pairs whose differences sum to T_c (N = sum n_c), the null "the turn-weighted
mean difference is delta" makes each conversation's whole shifted total T_c - n_c delta as likely to be
-(T_c - n_c delta), whatever the dependence between its turns: the sign is flipped per cluster, not per turn
(the randomisation test of a cluster-randomised design, P. Good 2005, ch. 3, with whole blocks as exchangeable
units; the cluster wild bootstrap's Rademacher weights of Cameron, Gelbach & Miller 2008, *Bootstrap-based
improvements for inference with clustered errors*, REStat 90(3), and Cameron & Miller 2015, J. Human Resources
50(2), section VI.C, whose randomisation version it is; Canay, Romano & Shaikh 2017, Econometrica 85(3), on its
exactness under symmetry). The statistic is

    |sum_c e_c (T_c - n_c delta)|

over the 2^M cluster sign vectors (exactly when M <= EXACT_MAX, else B sampled ones). For one sign vector with
kept clusters K and flipped clusters F, a = sum_K (T_c - n_c delta) = S_K - N_K delta and b = S_F - N_F delta
(S, N: the sums of T_c and n_c over the set), and as above the vector is extreme exactly when a b <= 0, i.e.

    min(m_K, m_F) <= delta <= max(m_K, m_F),        m_K = S_K / N_K,  m_F = S_F / N_F

the **turn-weighted** means of the kept and the flipped turns. Each such interval contains S / N, the turn-
weighted mean difference (a weighted average of m_K and m_F with weights N_K / N and N_F / N), so the argument
above goes through word for word: the accepted set is one interval on the turn-weighted mean difference, the
p-value is C(0) / N_vectors, and the test and the interval agree by construction. Tarone's p_min counts the sign
vectors constant on the clusters whose shifted total is not 0 (2^(1 - M_discordant) exactly). With every cluster
a single pair, T_c = d_c and n_c = 1: the procedure, its random stream included, is the one above, unchanged.
What it assumes: conversations independent of each other, and under the null the swap of a whole
conversation's two systems exchangeable (each conversation's shifted total symmetric about 0); nothing about
the turns within a conversation.

A spread within a few units in the last place of the largest |d_i| counts as no variation (rounding, not data).
Pure functions over numpy arrays; every random draw comes from :func:`ragassay.analysis.bootstrap.generator`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Sequence

import numpy as np

from .bootstrap import generator
from .clustered import UNIT, Clusters, cluster_sums, clusters_of, no_variation, spread, turns_in, unit_spread

__all__ = [
    "EXACT_MAX",
    "FLIPS",
    "PairInput",
    "PairOutcome",
    "decide_family",
    "describe",
    "no_variation",
    "null_counts",
    "spread",
]

EXACT_MAX = 12  # enumerate all 2^n sign vectors up to this many pairs
FLIPS = 10_000  # random sign vectors above EXACT_MAX
BATCH_ELEMENTS = 1 << 22  # sign bits drawn per batch


@dataclasses.dataclass(frozen=True)
class PairInput:
    """One comparison: the paired differences (candidate - baseline; NaN where a sample is not paired) and the
    difference ``null`` whose rejection decides it (0: superiority; -margin: non-inferiority)."""

    key: Hashable
    differences: np.ndarray
    null: float = 0.0
    #: per-row cluster labels (the conversation of each turn; :attr:`ragassay.models.Sample.cluster`), or None:
    #: every row its own cluster. Whole clusters are flipped (module docstring, "Clusters").
    clusters: Sequence[str] | np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class PairOutcome:
    """One comparison decided (module docstring).

    ``ci_low``/``ci_high`` are the bounds of the interval at ``level`` (None for an unbounded side: too few
    differing samples to bound it); ``rejected`` is exactly ``null`` outside that interval. ``in_family`` is False
    for a comparison left out by Tarone's reduction (or described outside the decision family); then ``level`` is
    the nominal alpha and ``rejected`` is False.
    """

    key: Hashable
    n: int
    n_discordant: int  # samples whose shifted difference is not 0
    mean: float | None
    sd: float | None  # None: fewer than 2 pairs, or no variation beyond rounding
    null: float
    p_value: float | None
    p_min: float | None
    p_holm: float | None
    level: float | None
    ci_low: float | None
    ci_high: float | None
    in_family: bool
    rejected: bool
    reason: str = ""
    n_clusters: int = 0  # clusters holding a paired sample (n for independent samples)
    clusters_discordant: int = 0  # clusters whose shifted total is not 0 (n_discordant for independent samples)
    unit_sd: float | None = None  # the per-cluster spread for power figures (:mod:`.clustered`); sd for singletons


@dataclasses.dataclass
class _NullCounts:
    """The sign vectors' intervals of one comparison: sorted lower and upper ends, and the counts at the null."""

    lows: np.ndarray  # ascending
    highs: np.ndarray  # ascending
    total: int  # N
    at_null: int  # C(null)
    constant: int  # sign vectors constant on the non-zero shifted differences (p_min = constant / N)

    def bounds(self, level: float) -> tuple[float, float]:
        """The accepted set {delta : C(delta) / N > level} as (low, high); -inf/inf where unbounded."""
        k = math.floor(level * self.total) + 1
        if k > self.total:
            return math.nan, math.nan
        return float(self.lows[k - 1]), float(self.highs[self.total - k])

    def rejects(self, level: float) -> bool:
        """p(null) <= level, in counts: C(null) <= floor(level N)."""
        return self.at_null <= math.floor(level * self.total)


def decide_family(
    inputs: Sequence[PairInput], alpha: float, seed: int = 0, *, flips: int = FLIPS, tarone: bool = True
) -> list[PairOutcome]:
    """Test every comparison of one family: Tarone's reduction, then Holm, each interval at its Holm level."""
    counts = null_counts(inputs, seed, flips)
    outcomes = [_describe(item, c, alpha) for item, c in zip(inputs, counts)]
    testable = [i for i, c in enumerate(counts) if c is not None]
    if tarone:
        testable = _tarone(testable, counts, alpha)
    levels, adjusted = _holm_levels(testable, counts, alpha)
    for i in range(len(inputs)):
        if i in levels:
            outcomes[i] = _decided(outcomes[i], counts[i], levels[i], adjusted[i])
        elif counts[i] is not None:
            outcomes[i] = _too_few(outcomes[i], counts[i])
    return outcomes


def describe(inputs: Sequence[PairInput], level: float, seed: int = 0, *, flips: int = FLIPS) -> list[PairOutcome]:
    """Comparisons outside the decision family: each interval at ``level``, no verdict (``rejected`` False)."""
    return [_describe(item, c, level) for item, c in zip(inputs, null_counts(inputs, seed, flips))]


def null_counts(inputs: Sequence[PairInput], seed: int = 0, flips: int = FLIPS) -> list[_NullCounts | None]:
    """The sign-flip intervals of each comparison (None with fewer than 2 clusters holding a pair). Comparisons
    with more than :data:`EXACT_MAX` such clusters share one seeded stream of ``flips`` sign vectors over the
    clusters of the rows of ``differences`` (one stream per cluster structure; one in all for independent rows)."""
    results: list[_NullCounts | None] = [None] * len(inputs)
    sampled: dict[bytes | None, list[int]] = {}
    for i, item in enumerate(inputs):
        units = units_of(item)
        paired = ~np.isnan(item.differences)
        held = int(paired.sum()) if units is None else units.among(paired)
        if held < 2:
            continue
        if held <= EXACT_MAX:
            results[i] = _exact(item.differences, units, item.null)
        else:
            sampled.setdefault(None if units is None else units.codes.tobytes(), []).append(i)
    for members in sampled.values():
        matrix = np.column_stack([inputs[i].differences for i in members])
        nulls = np.array([inputs[i].null for i in members])
        units = units_of(inputs[members[0]])
        for i, counts in zip(members, _sampled(matrix, nulls, seed, flips, units)):
            results[i] = counts
    return results


def units_of(item: PairInput) -> Clusters | None:
    """The clusters of ``item``'s rows, or None when every row is its own (independent samples)."""
    if item.clusters is None:
        return None
    if len(item.clusters) != len(item.differences):
        raise ValueError(f"{len(item.clusters)} cluster labels for {len(item.differences)} differences")
    units = clusters_of(item.clusters)
    return None if units.singletons else units


def cluster_totals(differences: np.ndarray, units: Clusters | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(T, n, d): each cluster's sum of paired differences and its number of pairs (the clusters holding a pair,
    in order of first appearance), and the paired differences themselves (``units`` None: each row its own)."""
    paired = ~np.isnan(differences)
    d = differences[paired]
    if units is None:
        return d, np.ones(len(d)), d
    _, local = np.unique(units.codes[paired], return_inverse=True)
    return np.bincount(local, weights=d), np.bincount(local).astype(np.float64), d


# -- the sign vectors' intervals ----------------------------------------------------------------------------


def _exact(differences: np.ndarray, units: Clusters | None, null: float) -> _NullCounts:
    """All 2^M sign vectors of one comparison's M clusters (bit 1 = flipped; M = n for independent rows)."""
    totals, sizes, d = cluster_totals(differences, units)
    m = len(totals)
    bits = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1).astype(np.float64)
    flipped_sum = bits @ totals
    flipped_count = bits.sum(axis=1) if units is None else bits @ sizes
    nonzero = _nonzero(totals - sizes * null, d, sizes)
    constant = _constant_rows(bits[:, nonzero]) if nonzero.any() else 2**m
    return _counts(flipped_sum, flipped_count, d, null, constant, extra_identity=False)


def _sampled(
    matrix: np.ndarray, nulls: np.ndarray, seed: int, flips: int, units: Clusters | None = None
) -> list[_NullCounts]:
    """``flips`` random sign vectors over the clusters of the rows of ``matrix`` (n x K, NaN = not paired; each row
    its own cluster when ``units`` is None), shared by its columns."""
    paired = ~np.isnan(matrix)
    values = np.where(paired, matrix, 0.0)
    if units is None:
        totals, sizes = values, paired.astype(np.float64)
    else:
        totals, sizes = cluster_sums(matrix, units.codes, units.count)
    rows, width = totals.shape
    nonzero = np.column_stack(
        [
            (sizes[:, j] > 0) & _nonzero(totals[:, j] - sizes[:, j] * nulls[j], values[:, j], sizes[:, j])
            for j in range(width)
        ]
    )
    weights = np.hstack([totals, sizes, nonzero.astype(np.float64)])
    sums = np.empty((flips, 3 * width))
    rng, batch, start = generator(seed), max(1, BATCH_ELEMENTS // max(rows, 1)), 0
    while start < flips:
        bits = rng.integers(0, 2, (min(batch, flips - start), rows), dtype=np.int8)
        sums[start : start + len(bits)] = bits.astype(np.float64) @ weights
        start += len(bits)
    results = []
    for j in range(width):
        flipped_sum, flipped_count, flipped_nonzero = sums[:, j], sums[:, width + j], sums[:, 2 * width + j]
        size = int(nonzero[:, j].sum())
        constant = 1 + int(np.count_nonzero((flipped_nonzero == 0) | (flipped_nonzero == size)))
        d = matrix[paired[:, j], j]
        results.append(_counts(flipped_sum, flipped_count, d, nulls[j], constant, extra_identity=True))
    return results


def _counts(
    flipped_sum: np.ndarray, flipped_count: np.ndarray, d: np.ndarray, null: float, constant: int, extra_identity: bool
) -> _NullCounts:
    """Each sign vector's interval [min(m_K, m_F), max(m_K, m_F)], widened to hold mean(d) (rounding only)."""
    n, total_sum = len(d), float(d.sum())
    tolerance = 4 * (n + 2) * np.finfo(np.float64).eps * float(np.max(np.abs(d), initial=0.0))
    kept_sum = total_sum - flipped_sum
    flipped_sum = np.where(np.abs(flipped_sum) <= tolerance, 0.0, flipped_sum)
    kept_sum = np.where(np.abs(kept_sum) <= tolerance, 0.0, kept_sum)
    kept_count = n - flipped_count
    whole = (flipped_count == 0) | (kept_count == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        flipped_mean, kept_mean = flipped_sum / flipped_count, kept_sum / kept_count
    mean = total_sum / n
    lows = np.where(whole, -np.inf, np.minimum(np.minimum(flipped_mean, kept_mean), mean))
    highs = np.where(whole, np.inf, np.maximum(np.maximum(flipped_mean, kept_mean), mean))
    if extra_identity:  # the observed sign vector, always counted (Phipson & Smyth)
        lows, highs = np.append(lows, -np.inf), np.append(highs, np.inf)
    at_null = int(np.count_nonzero((lows <= null) & (null <= highs)))
    return _NullCounts(np.sort(lows), np.sort(highs), len(lows), at_null, constant)


def _nonzero(shifted: np.ndarray, d: np.ndarray, sizes: np.ndarray | float = 1.0) -> np.ndarray:
    """Which shifted differences (or cluster totals of ``sizes`` differences) are not 0 beyond rounding."""
    tolerance = 4 * np.finfo(np.float64).eps * max(float(np.nanmax(np.abs(d), initial=0.0)), 1e-300)
    return ~np.isnan(shifted) & (np.abs(shifted) > tolerance * sizes)


def _constant_rows(bits: np.ndarray) -> int:
    """Sign vectors that keep, or flip, every one of the given columns."""
    flipped = bits.sum(axis=1)
    return int(np.count_nonzero((flipped == 0) | (flipped == bits.shape[1])))


# -- the family ---------------------------------------------------------------------------------------------


def _describe(item: PairInput, counts: _NullCounts | None, level: float) -> PairOutcome:
    units = units_of(item)
    totals, sizes, d = cluster_totals(item.differences, units)
    n, m = len(d), len(totals)
    sd = spread(d)
    clustering = {"n_clusters": m, "unit_sd": sd if units is None else unit_spread(item.differences, units.codes)[0]}
    if counts is None:
        reason = f"fewer than 2 paired samples ({n})"
        if units is not None and n >= 2:
            reason = f"fewer than 2 {UNIT}s with paired samples ({turns_in(n, m)})"
        mean = float(d.mean()) if n else None
        return PairOutcome(item.key, n, 0, mean, None, item.null, *[None] * 6, False, False, reason, **clustering)
    low, high = counts.bounds(level)
    n_discordant = int(np.count_nonzero(_nonzero(d - item.null, d)))
    return PairOutcome(
        item.key,
        n,
        n_discordant,
        float(d.mean()),
        sd,
        item.null,
        counts.at_null / counts.total,
        counts.constant / counts.total,
        None,
        level,
        _finite(low),
        _finite(high),
        False,
        False,
        clusters_discordant=n_discordant
        if units is None
        else int(_nonzero(totals - sizes * item.null, d, sizes).sum()),
        **clustering,
    )


def _decided(outcome: PairOutcome, counts: _NullCounts, level: float, adjusted: float) -> PairOutcome:
    low, high = counts.bounds(level)
    rejected = not (low <= outcome.null <= high)
    return dataclasses.replace(
        outcome,
        p_holm=adjusted,
        level=level,
        ci_low=_finite(low),
        ci_high=_finite(high),
        in_family=True,
        rejected=rejected,
    )


def _too_few(outcome: PairOutcome, counts: _NullCounts) -> PairOutcome:
    if outcome.n_discordant == 0:
        return dataclasses.replace(outcome, reason="equal on every sample: nothing to decide")
    if outcome.n_clusters < outcome.n:
        reason = (
            f"too few differing {UNIT}s to decide ({outcome.clusters_discordant} of {outcome.n_clusters} differ in "
            f"total; the smallest attainable p-value {counts.constant / counts.total:.3g} cannot reach the level)"
        )
        return dataclasses.replace(outcome, reason=reason)
    reason = (
        f"too few differing samples to decide (n_discordant = {outcome.n_discordant}; the smallest attainable "
        f"p-value {counts.constant / counts.total:.3g} cannot reach the level)"
    )
    return dataclasses.replace(outcome, reason=reason)


def _tarone(candidates: list[int], counts: list[_NullCounts | None], alpha: float) -> list[int]:
    """The comparisons Tarone's reduction keeps: p_min <= alpha / K, K the smallest k with m(k) <= k."""
    minima = {i: counts[i].constant / counts[i].total for i in candidates}
    for k in range(1, len(candidates) + 1):
        kept = [i for i in candidates if minima[i] <= alpha / k]
        if len(kept) <= k:
            return kept
    return candidates


def _holm_levels(family: list[int], counts: list, alpha: float) -> tuple[dict[int, float], dict[int, float]]:
    """Each comparison's Holm level (module docstring) and its Holm-adjusted p-value."""
    m = len(family)
    order = sorted(family, key=lambda i: (counts[i].at_null / counts[i].total, family.index(i)))
    levels, adjusted, stopped_at, running = {}, {}, None, 0.0
    for rank, i in enumerate(order):
        step = alpha / (m - rank)
        if stopped_at is None and not counts[i].rejects(step):
            stopped_at = step
        levels[i] = step if stopped_at is None else stopped_at
        running = max(running, min(1.0, (m - rank) * counts[i].at_null / counts[i].total))
        adjusted[i] = running
    return levels, adjusted


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
