"""Agreement statistics (ragassay.analysis.agreement, .annotators) equal scikit-learn, scipy and krippendorff on
fixtures; every bootstrap resample equals the reference statistic of the resample drawn; edge cases are
undefined with a reason."""

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score, precision_score, recall_score

from ragassay.analysis import agreement, annotators
from ragassay.analysis.bootstrap import counts_of, resample_indices

SCALE = [1, 2, 3, 4, 5]


def _binary(seed=1, n=40):
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 2, n).astype(bool)
    return human, np.where(rng.random(n) < 0.75, human, ~human)


def _ordinal(seed=2, n=50):
    rng = np.random.default_rng(seed)
    first = rng.integers(1, 6, n)
    return first, np.clip(first + rng.integers(-1, 2, n), 1, 5)


def test_binary_statistics_equal_scikit_learn():
    human, judged = _binary()
    got = agreement.binary_agreement(human, judged, resamples=200)
    assert got["precision"].value == pytest.approx(precision_score(human, judged))
    assert got["recall"].value == pytest.approx(recall_score(human, judged))
    assert got["balanced_accuracy"].value == pytest.approx(balanced_accuracy_score(human, judged))
    assert got["kappa"].value == pytest.approx(cohen_kappa_score(human, judged))
    for value in got.values():
        assert value.low <= value.value <= value.high


@pytest.mark.parametrize("weights", ["quadratic", "linear", "none"])
def test_weighted_kappa_equals_scikit_learn(weights):
    first, second = _ordinal()
    got = agreement.weighted_kappa(first, second, SCALE, weights, resamples=200)
    expected = cohen_kappa_score(first, second, labels=SCALE, weights=None if weights == "none" else weights)
    assert got.value == pytest.approx(expected)


def test_correlations_equal_scipy_with_ties():
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=30))  # many ties
    y = np.round(x + rng.normal(size=30))
    assert agreement.correlation(x, y, "pearson", resamples=200).value == pytest.approx(stats.pearsonr(x, y)[0])
    assert agreement.correlation(x, y, "spearman", resamples=200).value == pytest.approx(stats.spearmanr(x, y)[0])


def test_each_resample_is_the_reference_statistic_of_the_drawn_sample():
    rng = np.random.default_rng(4)
    x, y = np.round(rng.normal(size=15)), np.round(rng.normal(size=15))
    first, second = _ordinal(n=15)
    index = next(resample_indices(15, 5, seed=7))
    weights = counts_of(index, 15)
    spearman = agreement.spearman_statistic(x, y)(weights)
    kappa = agreement.weighted_kappa_statistic(first, second, SCALE)(weights)
    for row, drawn in enumerate(index):
        assert spearman[row] == pytest.approx(stats.spearmanr(x[drawn], y[drawn])[0])
        expected = cohen_kappa_score(first[drawn], second[drawn], labels=SCALE, weights="quadratic")
        assert kappa[row] == pytest.approx(expected)


def _reliability(seed=5):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, 25)
    data = np.array([np.clip(truth + rng.integers(-1, 2, 25), 1, 5) for _ in range(3)], dtype=float)
    data[0, :5] = np.nan
    data[2, 3:9] = np.nan
    data[1, 4] = np.nan  # item 4 keeps one value: not pairable
    units = [[v for v in data[:, u] if not np.isnan(v)] for u in range(data.shape[1])]
    return data, units


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_equals_the_krippendorff_package(level):
    data, units = _reliability()
    got = annotators.krippendorff_alpha(units, SCALE, level, resamples=200)
    assert got.value == pytest.approx(krippendorff.alpha(data, level_of_measurement=level, value_domain=SCALE))
    assert got.low <= got.value <= got.high


def test_alpha_resamples_items():
    data, units = _reliability()
    index = next(resample_indices(len(units), 3, seed=1))
    alphas = annotators.alpha_statistic(units, SCALE, "ordinal")(counts_of(index, len(units)))
    for row, drawn in enumerate(index):
        expected = krippendorff.alpha(data[:, drawn], level_of_measurement="ordinal", value_domain=SCALE)
        assert alphas[row] == pytest.approx(expected)


def test_binary_alpha_and_two_annotator_kappa():
    a, b = _binary(seed=6, n=30)
    got = annotators.krippendorff_alpha([[x, y] for x, y in zip(a * 1.0, b * 1.0)], [0.0, 1.0], "nominal")
    assert got.value == pytest.approx(krippendorff.alpha([a * 1.0, b * 1.0], level_of_measurement="nominal"))
    kappa = agreement.weighted_kappa(a * 1, b * 1, [0, 1], "none", resamples=100)
    assert kappa.value == pytest.approx(cohen_kappa_score(a, b))


def test_a_single_annotator_leaves_alpha_unscored_with_a_reason():
    got = annotators.krippendorff_alpha([[1.0], [2.0], [3.0]], [1.0, 2.0, 3.0], "ordinal")
    assert got.value is None and "two annotators" in got.reason


def test_one_class_only_is_undefined_not_zero():
    got = agreement.binary_agreement([True] * 6, [True, True, False, True, True, True], resamples=100)
    assert got["precision"].value == 1.0  # defined: every positive call is right
    assert got["balanced_accuracy"].value is None and got["balanced_accuracy"].reason == "people give one class only"
    assert got["kappa"].value == cohen_kappa_score([1] * 6, [1, 1, 0, 1, 1, 1]) == 0.0  # defined: chance level
    constant = agreement.binary_agreement([True] * 4, [True] * 4, resamples=100)["kappa"]
    assert constant.value is None and constant.reason == "both give one and the same class only"
    same = annotators.krippendorff_alpha([[2.0, 2.0], [2.0, 2.0]], [1.0, 2.0], "nominal")
    assert same.value is None and "same value" in same.reason
    flat = agreement.correlation([1, 1, 1, 1], [1, 2, 3, 4], "spearman")
    assert flat.value is None and flat.reason == "one side does not vary"


def test_clustered_bootstrap_draws_items_not_labels():
    # two annotators' labels of each item move together: the interval resamples the 10 items
    x = np.repeat(np.arange(10.0), 2)
    y = x + np.tile([0.5, -0.5], 10)
    statistic, clusters = agreement.clustered(agreement.pearson_statistic(x, y), np.repeat(np.arange(10), 2))
    assert clusters == 10
    assert statistic(np.ones((1, 10)))[0] == pytest.approx(stats.pearsonr(x, y)[0])


def test_intervals_are_deterministic_for_a_seed():
    first, second = _ordinal()
    one = agreement.weighted_kappa(first, second, SCALE, seed=3, resamples=300)
    assert one == agreement.weighted_kappa(first, second, SCALE, seed=3, resamples=300)
    assert one != agreement.weighted_kappa(first, second, SCALE, seed=4, resamples=300)
