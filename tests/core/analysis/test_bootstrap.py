"""Vectorised bootstrap intervals of a mean against scipy.stats.bootstrap and numbers measured with Unitxt 1.26.10."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

from ragassay.analysis import bootstrap
from ragassay.analysis.bootstrap import MeanInterval, bootstrap_mean_ci, counts_of, resample_indices, resample_means

NAN = float("nan")
GRID = [0.0, 1 / 3, 0.5, 5 / 6, 1.0, 0.25, 0.2]  # values of MAP / F1-like instance scores


def scipy_interval(values, method="BCa", statistic=np.nanmean, seed=42):
    """The reference: scipy.stats.bootstrap as Unitxt calls it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            (np.asarray(values, dtype=float),),
            statistic,
            n_resamples=1000,
            confidence_level=0.95,
            method=method,
            random_state=np.random.default_rng(seed),
        )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def unitxt_statistic(sample, axis):
    """Unitxt's statistic: the NaN-ignoring mean, NaN resample means redrawn by a fresh default_rng(42)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(sample, axis=axis)
    missing = np.isnan(means)
    if means.size > 1 and 0 < missing.sum() < means.size:
        means[missing] = np.random.default_rng(42).choice(means[~missing], int(missing.sum()), replace=True)
    return means


def random_scores(n, seed, with_nan):
    rng = np.random.default_rng(seed)
    values = rng.gamma(0.5, size=n)
    if with_nan:
        values[rng.choice(n, n // 5, replace=False)] = np.nan
    return values


@pytest.fixture(params=["one batch", "many batches"])
def batching(request, monkeypatch):
    """Run each comparison once with a single index batch and once with batches of a few rows."""
    if request.param == "many batches":
        monkeypatch.setattr(bootstrap, "BATCH_ELEMENTS", 1000)


@pytest.mark.parametrize("method", ["BCa", "percentile"])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("n", [10, 57, 300])
def test_equal_to_scipy_bootstrap_on_continuous_scores(n, with_nan, method, batching):
    values = random_scores(n, seed=n, with_nan=with_nan)
    result = bootstrap_mean_ci(values, method=method)
    low, high = scipy_interval(values, method)
    assert result.mean == np.nanmean(values) and result.reason is None
    assert result.ci_low == pytest.approx(low, abs=1e-12) and result.ci_high == pytest.approx(high, abs=1e-12)
    assert (result.n, result.n_scored) == (n, n - (n // 5 if with_nan else 0))


@pytest.mark.parametrize("n", [5, 10, 30, 100])
def test_resample_means_that_tie_with_the_mean_are_counted_as_scipy_counts_them(n, batching):
    # Discrete scores make many resample means equal to the mean; summed in another order they can land one
    # ulp to either side, which moves BCa's z0 and the interval (by up to 0.03 at n = 5).
    rng = np.random.default_rng(n)
    for _ in range(8):
        values = rng.choice(GRID, size=n)
        result = bootstrap_mean_ci(values)
        low, high = scipy_interval(values)
        assert (result.ci_low, result.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


@pytest.mark.parametrize("n", [3, 4, 5, 7])
def test_nan_resample_means_are_redrawn_as_unitxt_does(n):
    # With half the scores unscored, tens of the 1000 resamples draw only NaN.
    rng = np.random.default_rng(100 + n)
    for _ in range(6):
        values = rng.random(n)
        values[rng.choice(n, n // 2, replace=False)] = np.nan
        if np.count_nonzero(~np.isnan(values)) < 2:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # and no warning escapes
            result = bootstrap_mean_ci(values)
        low, high = scipy_interval(values, statistic=unitxt_statistic)
        assert (result.ci_low, result.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


# Measured with unitxt 1.26.10 (MetricWithConfidenceInterval.score_based_confidence_interval, n_resamples=1000,
# seed 42): instance scores -> (score_ci_low, score_ci_high).
UNITXT_CASES = [
    ([0.8333333333333333, 0.5, 0.0], 0.4444444444444444, (0.0, 0.7222222222222222)),  # MAP
    ([0.0, 0.0, 1.0], 1 / 3, (0.0, 1.0)),  # token-overlap precision
    ([NAN, NAN, 1.0, 0.0], 0.5, (0.0, 1.0)),
    ([NAN, 0.25, NAN, 1.0, NAN, 0.5], 0.5833333333333334, (0.25, 1.0)),
    ([0.0, 1 / 3, 0.5, 5 / 6, 1.0, 0.5, 0.25, 0.0, 1 / 3, 0.2], 0.395, (0.22000000000000003, 0.6155336404850769)),
    # resamples of only NaN present: without Unitxt's redraw these intervals would be NaN
    ([NAN, 0.0, 0.5, NAN, 1 / 3, 0.0], 0.20833333333333331, (0.0, 0.4583333333333333)),
    (
        [0.32303634625820665, 0.15019972907045187, NAN, 0.37944617155031246, NAN, 0.5899916930106103, NAN],
        0.36066848497239534,
        (0.2077382737819988, 0.5373553126455358),
    ),
]


@pytest.mark.parametrize(("scores", "mean", "interval"), UNITXT_CASES)
def test_the_intervals_unitxt_gives(scores, mean, interval):
    result = bootstrap_mean_ci(scores)
    assert result.mean == pytest.approx(mean, abs=1e-15) and result.reason is None
    assert (result.ci_low, result.ci_high) == (pytest.approx(interval[0], abs=1e-12), pytest.approx(interval[1]))


def test_equal_scores_get_no_interval_as_in_unitxt():
    result = bootstrap_mean_ci([0.5, 0.5, NAN, 0.5])
    assert result == MeanInterval(0.5, None, None, 4, 3, "every scored instance has the same value")


@pytest.mark.parametrize(
    ("scores", "n_resamples", "mean", "reason"),
    [
        ([0.7], 1000, 0.7, "fewer than 2 instances (1)"),
        ([], 1000, None, "fewer than 2 instances (0)"),
        ([0.2, 0.9], None, 0.55, "no resampling (n_resamples=None)"),
        ([0.2, 0.9], 1, 0.55, "no resampling (n_resamples=1)"),
        ([NAN, NAN, NAN], 1000, None, "no scored instance"),
    ],
)
def test_no_interval_says_why(scores, n_resamples, mean, reason):
    result = bootstrap_mean_ci(scores, n_resamples=n_resamples)
    assert (result.mean, result.ci_low, result.ci_high, result.reason) == (pytest.approx(mean), None, None, reason)


def test_columns_share_the_resamples_and_each_matches_its_own_computation(batching):
    rng = np.random.default_rng(3)
    columns = np.column_stack([rng.random(40), rng.choice(GRID, 40), np.full(40, 0.5), random_scores(40, 4, True)])
    columns[:10, 0] = np.nan
    results = bootstrap_mean_ci(columns)
    assert [r.reason for r in results] == [None, None, "every scored instance has the same value", None]
    for together, alone in zip(results, [bootstrap_mean_ci(column) for column in columns.T]):
        # the same resamples; the matrix product may round the last bit differently with other columns beside
        for got, want in zip(dataclasses.astuple(together), dataclasses.astuple(alone)):
            if isinstance(want, float):
                assert got == pytest.approx(want, rel=1e-14, abs=1e-15)
            else:  # None where there is no interval, counts, the reason
                assert got == want
    assert results[3].ci_low == pytest.approx(scipy_interval(columns[:, 3])[0], abs=1e-12)


def test_batches_continue_the_stream_of_one_draw(monkeypatch):
    for n, n_resamples, batch_elements in [(7, 100, 20), (3, 1000, 7), (300, 37, 1000), (5, 9, 1)]:
        monkeypatch.setattr(bootstrap, "BATCH_ELEMENTS", batch_elements)
        batches = list(resample_indices(n, n_resamples, seed=42))
        assert len(batches) > 1
        whole = np.random.default_rng(42).integers(0, n, (n_resamples, n))
        assert np.array_equal(np.vstack(batches), whole)


def test_kept_draws_are_the_draws(monkeypatch):
    """A second call over the same (n, resamples, seed) reads the kept draws; a draw too large to keep, or one
    evicted by newer ones, is drawn again: the same indices, in the same batches, every time."""
    monkeypatch.setattr(bootstrap, "BATCH_ELEMENTS", 40)
    bootstrap._kept.clear()
    for n, n_resamples, seed in [(7, 50, 3), (70_000, 2, 4), (7, 50, 3), (7, 50, 5), (70_000, 2, 4), (7, 50, 3)]:
        whole = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
        for _ in range(2):
            batches = list(resample_indices(n, n_resamples, seed=seed))
            assert all(b.dtype == np.int64 for b in batches) and [len(b) for b in batches[:1]] == [max(1, 40 // n)]
            assert np.array_equal(np.vstack(batches), whole)
        assert (n, n_resamples, seed) in bootstrap._kept and len(bootstrap._kept) <= bootstrap.DRAWS_KEPT
    monkeypatch.setattr(bootstrap, "DRAWS_KEPT_BYTES", 10)  # too large to keep: drawn batch by batch
    bootstrap._kept.clear()
    assert np.array_equal(
        np.vstack(list(resample_indices(70_000, 2, seed=1))), np.random.default_rng(1).integers(0, 70_000, (2, 70_000))
    )
    assert not bootstrap._kept


def test_resample_means_are_the_scipy_bootstrap_distribution(monkeypatch):
    monkeypatch.setattr(bootstrap, "BATCH_ELEMENTS", 500)
    values = random_scores(57, seed=9, with_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = stats.bootstrap(
            (values,), np.nanmean, n_resamples=1000, method="percentile", random_state=np.random.default_rng(42)
        ).bootstrap_distribution
    assert np.allclose(resample_means(values[:, None], 1000, seed=42)[:, 0], reference, rtol=0, atol=1e-14)


def test_counts_are_how_often_each_instance_was_drawn():
    index = np.array([[0, 0, 2, 4, 4], [1, 1, 1, 1, 3]])
    assert counts_of(index, 5).tolist() == [[2, 0, 1, 0, 2], [0, 4, 0, 1, 0]]


def test_seeded():
    values = random_scores(50, seed=1, with_nan=False)
    first, again, other = bootstrap_mean_ci(values), bootstrap_mean_ci(values), bootstrap_mean_ci(values, seed=7)
    assert first == again and first.mean == other.mean
    assert (first.ci_low, first.ci_high) != (other.ci_low, other.ci_high)
    low, high = scipy_interval(values, seed=7)
    assert (other.ci_low, other.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert bootstrap_mean_ci(values, seed=2**32 + 42) == first  # Unitxt masks hash(seed) to 32 bits


@pytest.mark.slow
def test_same_numbers_in_other_processes_and_hash_seeds():
    code = (
        "import numpy as np; from ragassay.analysis.bootstrap import bootstrap_mean_ci as b; "
        "r = np.random.default_rng(5); x = r.choice([0, 1/3, 0.5, 1, np.nan], size=(200, 3)); print(repr(b(x)))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hash_seed in ("0", "1")
    }
    x = np.random.default_rng(5).choice([0, 1 / 3, 0.5, 1, np.nan], size=(200, 3))
    assert outputs == {repr(bootstrap_mean_ci(x)) + "\n"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "basic"}, "method must be one of BCa, percentile"),
        ({"confidence_level": 95}, "confidence_level must be between 0 and 1"),
        ({"seed": "42"}, "seed must be an integer"),
        ({"n_resamples": 10.5}, "n_resamples must be an integer or None"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_mean_ci([0.1, 0.2], **kwargs)


@pytest.mark.parametrize(("values", "message"), [(np.zeros((2, 2, 2)), "1-D"), ([0.1, float("inf")], "infinite")])
def test_bad_values_are_refused(values, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_mean_ci(values)


def test_the_unpaired_difference_interval_agrees_with_scipy_bca():
    from scipy.stats import bootstrap as scipy_bootstrap

    from ragassay.analysis.bootstrap import difference_ci

    rng = np.random.default_rng(7)
    a, b = rng.beta(2, 5, 60), rng.beta(3, 4, 45)
    ours = difference_ci(a, b, n_resamples=4000, seed=1)
    theirs = scipy_bootstrap(
        (a, b),
        lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
        vectorized=True,
        paired=False,
        n_resamples=4000,
        method="BCa",
        rng=np.random.default_rng(1),
    ).confidence_interval
    assert ours.difference == pytest.approx(a.mean() - b.mean())
    assert ours.ci_low == pytest.approx(theirs.low, abs=0.012) and ours.ci_high == pytest.approx(theirs.high, abs=0.012)
    assert ours == difference_ci(a, b, n_resamples=4000, seed=1)  # seeded


def test_quantile_intervals_hold_the_quantile_and_follow_numpy():
    from ragassay.analysis.bootstrap import quantile_ci

    x = np.random.default_rng(3).lognormal(0, 1, 500)
    found = quantile_ci(x, (0.5, 0.95), n_resamples=800, seed=2)
    for q in found:
        assert q.value == pytest.approx(np.quantile(x, q.q)) and q.ci_low <= q.value <= q.ci_high and q.n == 500
    # one resample by hand: numpy's linear quantile of the drawn values
    index = next(resample_indices(500, 1, seed=2))
    drawn = np.quantile(x[index[0]], 0.95)
    from ragassay.analysis.bootstrap import _resampled_quantile

    running = np.cumsum(counts_of(index[:1], 500)[:, np.argsort(x)], axis=1)
    assert _resampled_quantile(np.sort(x), running, 0.95)[0] == pytest.approx(drawn)
    assert quantile_ci([1.0])[0].reason == "fewer than 2 values (1)"
