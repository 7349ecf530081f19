"""Stopping early: the betting confidence sequence, its rules, the replay of a sequential run, and a seeded
simulation of its error rate and savings (2,000 replications, values drawn from fixed distributions)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragassay.analysis.sequential import (
    BETTER,
    NON_INFERIOR,
    NOT_SETTLED,
    WORSE,
    bets,
    bounds,
    log_capital,
    plug_in,
    settle,
)
from ragassay.analysis.sequential_replay import Comparison, SequentialSettings, replay
from ragassay.errors import DatasetError

REPLICATIONS, SAMPLES, ALPHA = 2000, 1000, 0.05
SLACK = 3 * math.sqrt(ALPHA * (1 - ALPHA) / REPLICATIONS)  # three Monte Carlo standard errors


def bernoulli_gains(p_baseline, p_candidate, seed, rows=REPLICATIONS, n=SAMPLES):
    """Paired 0/1 outcomes of two independent systems; gains candidate - baseline in {-1, 0, 1}."""
    rng = np.random.default_rng(seed)
    return (rng.random((rows, n)) < p_candidate).astype(float) - (rng.random((rows, n)) < p_baseline)


# -- the seeded simulation of the issue ------------------------------------------------------------------------


def test_under_no_difference_a_difference_is_ever_declared_at_most_alpha_of_the_time():
    paths = settle(bernoulli_gains(0.6, 0.6, seed=1), 1.0, ALPHA, batch=10)
    ever = float(np.mean(paths.codes != 0))
    assert ever <= ALPHA + SLACK, f"declared a difference in {ever:.3%} of {REPLICATIONS} null runs"


def test_family_wise_error_of_three_comparisons_with_bonferroni():
    rng = np.random.default_rng(2)
    baseline = rng.random((REPLICATIONS, SAMPLES)) < 0.6
    anywhere = np.zeros(REPLICATIONS, bool)
    for _ in range(3):  # three candidates, each equal to the baseline, one shared baseline
        gains = (rng.random((REPLICATIONS, SAMPLES)) < 0.6).astype(float) - baseline
        anywhere |= settle(gains, 1.0, ALPHA / 3, batch=25).codes != 0
    assert anywhere.mean() <= ALPHA + SLACK, f"family-wise error {anywhere.mean():.3%}"


def test_a_ten_point_difference_settles_in_at_most_half_a_fixed_run():
    paths = settle(bernoulli_gains(0.6, 0.7, seed=3), 1.0, ALPHA, batch=10)
    median = float(np.median(paths.settled_at))
    assert median <= SAMPLES / 2, f"median samples judged {median:.0f} of {SAMPLES}"
    assert np.mean(paths.codes == 1) > 0.85
    assert np.mean(paths.codes == 2) <= ALPHA / 2  # the wrong sign: the upper side's share of alpha at most
    print(f"10-point difference: median {median:.0f} samples judged of {SAMPLES}")


def test_a_one_point_difference_runs_to_the_maximum_not_settled():
    paths = settle(bernoulli_gains(0.6, 0.61, seed=4), 1.0, ALPHA, batch=10, limit=800)
    assert np.mean(paths.codes == 0) > 0.9
    assert np.all(paths.settled_at[paths.codes == 0] == 800)
    one = replay(
        _two(*bernoulli_gains(0.6, 0.61, seed=5, rows=2)),
        [Comparison("b", "a", "m", 0.0, 1.0)],
        SequentialSettings(batch=10, max_samples=800),
    )
    assert (one.settled[0].decision, one.settled[0].settled_at, one.judged) == (NOT_SETTLED, 800, {"a": 800, "b": 800})


def _two(a, b):
    """Two systems' 0/1 values from two rows of outcomes."""
    return {"a": {"m": (a > 0).astype(float)}, "b": {"m": (b > 0).astype(float)}}


# -- hand-checked cases ----------------------------------------------------------------------------------------


def test_constant_wins_settle_when_the_capital_reaches_two_over_alpha():
    # every gain +1 on a 0-1 metric: x = 1, m(0) = 1/2, both bets truncated at c / m(0) = 1 once they exceed it:
    # the aimed bet is 0 first (mu_0 = 1/2), then >= 1; the plug-in bet is >= 1 from the start. So the aimed
    # capital is 1.5^(t-1), the plug-in one 1.5^t, their mix 1.25 x 1.5^(t-1), which first reaches
    # 2 / 0.05 = 40 at t = 10 (1.25 x 1.5^9 = 48.1; at t = 9, 32.0)
    gains = np.ones(40)
    x = np.ones((1, 40))
    assert np.exp(log_capital(x, bets(x, 0.5), 0.5, 1)[0, :3]) == pytest.approx([1.0, 1.5, 2.25])
    assert np.all(plug_in(x, ALPHA)[0, :12] >= 1) and np.all(bets(x, 0.5)[0, 1:12] >= 1)
    assert settle(gains, 1.0, ALPHA, batch=1).settled_at[0] == 10
    assert settle(gains, 1.0, ALPHA, batch=3).settled_at[0] == 12
    assert settle(-gains, 1.0, ALPHA, batch=1).decisions == [WORSE]
    low, high = bounds(gains, 1.0, ALPHA, 10)
    assert 0 < low < 1 and high == 1.0
    assert bounds(gains, 1.0, ALPHA, 9)[0] < 0  # 32 < 40: not yet


def test_equal_systems_settle_non_inferior_with_a_margin_and_never_otherwise():
    zeros = np.zeros(1000)
    plain = settle(zeros, 1.0, ALPHA, batch=10)
    assert (plain.decisions, int(plain.settled_at[0])) == ([NOT_SETTLED], 1000)
    assert bounds(zeros, 1.0, ALPHA, 1000)[0] < 0 < bounds(zeros, 1.0, ALPHA, 1000)[1]
    margin = settle(zeros, 1.0, ALPHA, batch=10, margin=0.02)
    at = int(margin.settled_at[0])
    assert margin.decisions == [NON_INFERIOR] and at < 1000
    low, high = bounds(zeros, 1.0, ALPHA, at, margin=0.02)
    assert -0.02 < low < 0 < high


def test_one_sample_settles_nothing_and_bounds_are_the_whole_range():
    paths = settle(np.array([1.0]), 1.0, ALPHA, batch=10)
    assert (paths.decisions, int(paths.settled_at[0])) == ([NOT_SETTLED], 1)
    assert bounds(np.array([1.0]), 1.0, ALPHA, 1) == (-1.0, 1.0)


def test_values_outside_the_declared_range_are_an_error_naming_them():
    values = {"a": {"m": [0.2, 0.4]}, "b": {"m": [0.3, 1.5]}}
    with pytest.raises(
        DatasetError, match=r"b / m: value 1\.5 at index 1 is outside the declared range \[0\.0, 1\.0\]"
    ):
        replay(values, [Comparison("b", "a", "m", 0.0, 1.0)])
    with pytest.raises(DatasetError, match="outside"):
        settle(np.array([0.5, 2.5]), 1.0, ALPHA, batch=1)


def test_decision_and_interval_agree_on_every_row():
    gains = bernoulli_gains(0.6, 0.66, seed=6, rows=40, n=600)
    paths = settle(gains, 1.0, ALPHA, batch=20)
    for row, decision, at in zip(gains, paths.decisions, paths.settled_at):
        low, high = bounds(row, 1.0, ALPHA, int(at))
        assert (decision == BETTER) == (low >= 0) and (decision == WORSE) == (high <= 0)
        assert low <= row[: int(at)].mean() <= high


# -- the replay of a run ---------------------------------------------------------------------------------------


def three_systems(seed=7, n=1000):
    rng = np.random.default_rng(seed)
    return {
        name: {"judge": (rng.random(n) < p).astype(float), "score": rng.beta(2, 2, n)}
        for name, p in (("base", 0.5), ("strong", 0.75), ("same", 0.5))
    }


def test_replay_stops_each_system_when_its_comparisons_settle_and_counts_the_calls():
    values = three_systems()
    family = [Comparison("strong", "base", "judge", 0, 1), Comparison("same", "base", "judge", 0, 1)]
    run = replay(values, family, SequentialSettings(batch=25), seed=3)
    strong, same = run.settled
    assert strong.decision == BETTER and strong.level == ALPHA / 2 and strong.settled_at < 400
    assert strong.ci_low > 0 and strong.n == strong.settled_at
    assert same.decision == NOT_SETTLED and same.settled_at == 1000
    # settled after batch k: processed on k + lookahead batches (default 1: the batch a live run started)
    assert run.judged == {"base": 1000, "strong": strong.settled_at + 25, "same": 1000}
    assert run.calls == {s: 2 * j for s, j in run.judged.items()}  # two metrics judged per sample
    assert run.calls_saved == 2 * (1000 - strong.settled_at - 25)
    assert sum(run.batch_calls(25)) == sum(run.calls.values())
    strict = replay(values, family, SequentialSettings(batch=25, lookahead=0), seed=3)
    assert strict.settled == run.settled  # the look-ahead changes what is processed, never what is decided
    assert strict.judged == {"base": 1000, "strong": strong.settled_at, "same": 1000}
    late = replay(values, family, SequentialSettings(batch=25, lookahead=3, max_samples=strong.settled_at + 50), seed=3)
    assert late.judged["strong"] == strong.settled_at + 50  # never past the last check


def test_replay_is_deterministic_for_a_seed_and_the_order_matters():
    values = three_systems()
    family = [Comparison("strong", "base", "judge", 0, 1)]
    points = {seed: replay(values, family, seed=seed).settled[0].settled_at for seed in (1, 1, 2, 3, 4)}
    assert replay(values, family, seed=1) == replay(values, family, seed=1)
    assert len(set(points.values())) > 1


def test_lower_is_better_flips_the_gain_and_unscored_samples_are_skipped():
    values = three_systems()
    latency = {s: {"judge": 1 - v["judge"]} for s, v in values.items()}  # lower is better
    latency["strong"]["judge"][::10] = np.nan
    run = replay(latency, [Comparison("strong", "base", "judge", 0, 1, higher_is_better=False)], seed=3)
    settled = run.settled[0]
    assert settled.decision == BETTER and settled.mean > 0
    assert settled.n < settled.settled_at  # every tenth sample unscored: not paired


def test_a_margin_settles_equal_continuous_scores_as_non_inferior():
    rng = np.random.default_rng(8)
    shared = rng.beta(2, 2, 1000)
    values = {s: {"score": np.clip(shared + rng.normal(0, 0.02, 1000), 0, 1)} for s in ("a", "b")}
    run = replay(values, [Comparison("b", "a", "score", 0.0, 1.0, margin=0.02)], SequentialSettings(batch=20))
    assert run.settled[0].decision == NON_INFERIOR and run.settled[0].settled_at < 1000
    assert run.settled[0].ci_low > -0.02
