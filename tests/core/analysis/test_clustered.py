"""Clustered statistics, exactly: the cluster sign-flip test and its interval by hand on a tiny case and by
enumeration, Tarone's p_min over conversations, the cluster bootstrap, the per-conversation spread, and the
equivalence with the independent-samples procedures when every cluster is one sample."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ragassay.analysis.bootstrap import bootstrap_mean_ci
from ragassay.analysis.clustered import cluster_mean_ci, clusters_of, turns_in, unit_spread
from ragassay.analysis.paired import PairInput, decide_family, describe
from ragassay.analysis.power import PAIRED, PowerSettings, estimate, mde
from ragassay.analysis.verdicts import decide_columns

# three conversations: A (2 turns, total 1.5), B (1 turn, 0.2), C (3 turns, 0.6); turn-weighted mean 2.3 / 6
TINY = np.array([1.0, 0.5, 0.2, -0.1, 0.3, 0.4])
TINY_CLUSTERS = ["A", "A", "B", "C", "C", "C"]


def test_tiny_case_by_hand():
    """The 8 sign vectors flip whole conversations. |sum e_c T_c| is 2.3 (none or all flipped), 0.7 (A alone),
    1.9 (B), 1.1 (C): 2 of 8 reach 2.3, p = 0.25 (the identity and its mirror), which is also p_min (every
    conversation differs). Each vector's interval [min(m_K, m_F), max(m_K, m_F)] on turn-weighted means: the whole
    line twice, [0.2, 0.75] (A vs B+C), [0.2, 0.42] (B vs A+C), [0.2, 0.5667] (C vs A+B), twice each. At level
    0.5, k = 5: the 5th smallest low end is 0.2, the 5th largest high end 0.5667."""
    (o,) = describe([PairInput("k", TINY, clusters=TINY_CLUSTERS)], 0.5)
    assert o.p_value == 0.25 and o.p_min == 0.25
    assert o.n == 6 and o.n_clusters == 3 and o.clusters_discordant == 3
    assert o.mean == pytest.approx(2.3 / 6)
    assert o.ci_low == pytest.approx(0.2) and o.ci_high == pytest.approx(1.7 / 3)
    (independent,) = describe([PairInput("k", TINY)], 0.5)
    # per turn: flipping a set F of turns is extreme when its sum is <= 0 or >= 2.3: F empty or {-0.1}, and their
    # complements, 4 of 64: a smaller p-value than the conversations support
    assert independent.p_value == 4 / 64
    (wide,) = describe([PairInput("k", TINY, clusters=TINY_CLUSTERS)], 0.05)
    assert wide.ci_low is None and wide.ci_high is None  # 3 conversations cannot bound a 95% interval


def cluster_p(d, labels, delta=0.0):
    """p(delta) by the definition: all 2^M sign vectors of the conversations' shifted totals."""
    codes = clusters_of(labels).codes
    totals = np.bincount(codes, weights=d - delta)
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=len(totals))))
    return float(np.mean(np.abs(signs @ totals) >= abs(totals.sum()) - 1e-12))


def clustered_case(seed: int, conversations: int):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, conversations)
    labels = [f"c{c}" for c, size in enumerate(sizes) for _ in range(size)]
    effect = rng.normal(0.2, 0.6, conversations)[clusters_of(labels).codes]
    return np.round(effect + rng.normal(0, 0.3, len(labels)), 2), labels


@pytest.mark.parametrize("seed", range(4))
def test_exact_p_is_the_definition(seed):
    d, labels = clustered_case(seed, 9)
    (o,) = describe([PairInput("k", d, clusters=labels)], 0.05)
    assert o.p_value == pytest.approx(cluster_p(d, labels), abs=1e-12)


def test_sampled_p_agrees_with_enumeration():
    d, labels = clustered_case(9, 15)  # above EXACT_MAX: 10,000 sampled sign vectors
    (o,) = describe([PairInput("k", d, clusters=labels)], 0.05)
    assert o.p_value == pytest.approx(cluster_p(d, labels), abs=0.015)


@pytest.mark.parametrize("seed", range(3))
def test_the_interval_is_the_set_the_cluster_test_does_not_reject(seed):
    d, labels = clustered_case(seed + 20, 8)
    (o,) = describe([PairInput("k", d, clusters=labels)], 0.1)
    assert o.ci_low <= o.mean <= o.ci_high
    for delta in np.linspace(d.min(), d.max(), 301):
        if min(abs(delta - o.ci_low), abs(delta - o.ci_high)) > 1e-6:
            assert (o.ci_low < delta < o.ci_high) == (cluster_p(d, labels, delta) > 0.1), delta


def test_tarone_counts_conversations_whose_totals_differ():
    d = np.array([0.5, -0.5, 1.0, 1.0, 1.0, 0.0, 1.0])  # conversation x cancels out: it cannot move the statistic
    labels = ["x", "x", "y", "z", "w", "v", "u"]
    (o,) = decide_family([PairInput("k", d, clusters=labels)], 0.05)
    assert o.n_clusters == 6 and o.clusters_discordant == 4  # y, z, w, u; x sums to 0, v is 0
    assert o.p_min == pytest.approx(2 ** (1 - 4))
    assert not o.in_family and "conversations" in o.reason and "4 of 6" in o.reason


def test_fewer_than_two_conversations_is_not_comparable():
    (o,) = describe([PairInput("k", np.array([0.1, 0.2, 0.3]), clusters=["a", "a", "a"])], 0.05)
    assert o.p_value is None and "fewer than 2 conversations" in o.reason and "3 turns in 1 conversation" in o.reason


@pytest.mark.parametrize("n", [7, 40])  # exact and sampled
def test_singletons_are_the_independent_procedure_exactly(n):
    rng = np.random.default_rng(n)
    inputs = [rng.normal(0.1, 1.0, n) for _ in range(3)]
    inputs[1][2] = np.nan
    labels = [f"q{i}" for i in range(n)]
    plain = decide_family([PairInput(i, d, -0.05) for i, d in enumerate(inputs)], 0.05, seed=3)
    labelled = decide_family([PairInput(i, d, -0.05, clusters=labels) for i, d in enumerate(inputs)], 0.05, seed=3)
    assert plain == labelled
    assert all(o.n_clusters == o.n and o.unit_sd == o.sd for o in plain)


def test_singleton_verdicts_and_cells_are_unchanged():
    rng = np.random.default_rng(2)
    columns = {("a", "m"): rng.uniform(size=30), ("b", "m"): rng.uniform(size=30)}
    args = (columns, ["a", "b"], ["m"], {"m": "higher"})
    assert decide_columns(*args) == decide_columns(*args, clusters=[f"q{i}" for i in range(30)])
    units = clusters_of([f"q{i}" for i in range(30)])
    assert cluster_mean_ci(columns[("a", "m")], units, seed=4) == bootstrap_mean_ci(
        columns[("a", "m")][:, None], seed=4
    )


def test_cluster_bootstrap_resamples_conversations():
    """The interval's resamples are of conversations: duplicating every turn inside its conversation leaves the
    turn-weighted mean and every resample's mean the same, so the interval does not narrow (a turn-level bootstrap
    narrows it by about sqrt(2))."""
    d, labels = clustered_case(3, 20)
    doubled, doubled_labels = np.repeat(d, 2), list(np.repeat(labels, 2))
    (once,) = cluster_mean_ci(d, clusters_of(labels), seed=1)
    (twice,) = cluster_mean_ci(doubled, clusters_of(doubled_labels), seed=1)
    assert twice.mean == pytest.approx(once.mean)
    assert (twice.ci_low, twice.ci_high) == pytest.approx((once.ci_low, once.ci_high))
    assert twice.n == 2 * once.n
    (iid,) = cluster_mean_ci(doubled, clusters_of(None, len(doubled)), seed=1)
    assert iid.ci_high - iid.ci_low < 0.8 * (once.ci_high - once.ci_low)


def test_cluster_bootstrap_reasons():
    (one,) = cluster_mean_ci(np.array([0.1, 0.4, 0.3]), clusters_of(["a", "a", "a"]))
    assert one.ci_low is None and "fewer than 2 conversations" in one.reason
    (flat,) = cluster_mean_ci(np.array([0.5, 0.5, 0.5]), clusters_of(["a", "a", "b"]))
    assert flat.ci_low is None and flat.mean == 0.5


def test_unit_spread_by_hand():
    """u_c = T_c - n_c * mean: A 1.5 - 2m, B 0.2 - m, C 0.6 - 3m with m = 2.3 / 6; s_unit = sd(u) * M / N."""
    m = 2.3 / 6
    u = np.array([1.5 - 2 * m, 0.2 - m, 0.6 - 3 * m])
    sd, count = unit_spread(TINY, clusters_of(TINY_CLUSTERS).codes)
    assert count == 3 and sd == pytest.approx(np.std(u, ddof=1) * 3 / 6)
    plain, n = unit_spread(TINY, None)
    assert n == 6 and plain == pytest.approx(np.std(TINY, ddof=1))


def test_power_counts_conversations():
    d, labels = clustered_case(5, 30)
    settings = PowerSettings(effect=0.05)
    clustered = estimate("m", list(d), PAIRED, settings, labels)
    unit_sd, m = unit_spread(d, clusters_of(labels).codes)
    assert clustered.n == len(d) and clustered.n_clusters == 30 and clustered.unit_sd == pytest.approx(unit_sd)
    assert clustered.mde == pytest.approx(mde(unit_sd, 30, 0.05, 0.8)[0])
    assert clustered.needed == math.ceil(clustered.needed_clusters * len(d) / 30)
    independent = estimate("m", list(d), PAIRED, settings)
    assert clustered.mde > independent.mde  # correlated turns carry less information
    singletons = estimate("m", list(d), PAIRED, settings, [str(i) for i in range(len(d))])
    assert singletons == independent


def test_turns_in_words():
    assert turns_in(12, 3) == "12 turns in 3 conversations"
    assert turns_in(1, 1) == "1"
    assert turns_in(2, 1) == "2 turns in 1 conversation"
    assert turns_in(12, None) == turns_in(12, 12) == "12"
