"""Prediction-powered estimates (core/analysis/ppi.py) against a hand computation and against the published
``ppi_py`` code (Angelopoulos, Duchi, Zrnic; vendored in tests/vendor/ppi_py_0_2_3, MIT) on the same data; the
active estimator's unbiasedness and the labels-needed planner."""

import math
import random
from pathlib import Path

import pytest

from ragassay.analysis.ppi import labels_needed, mean_interval, ppi_active_mean, ppi_mean, ppi_std_error

VENDORED = Path(__file__).resolve().parents[2] / "vendor" / "ppi_py_0_2_3"


def test_plain_ppi_by_hand():
    # labels 1, 0, 1, 1; judge on them 1, 1, 1, 0; judge elsewhere 1, 0, 1, 1, 0, 1
    res = ppi_mean([1, 0, 1, 1], [1, 1, 1, 0], [1, 0, 1, 1, 0, 1], lam=1)
    # rectifier mean(y - f) = (0 - 1 + 0 + 1) / 4 = 0; judge's unlabelled mean 4/6
    assert res.estimate == pytest.approx(4 / 6)
    # se^2 = var_pop(f_unl) / 6 + var_pop(y - f) / 4 = (2/9) / 6 + (1/2) / 4
    se = math.sqrt((2 / 9) / 6 + 0.5 / 4)
    assert res.std_error == pytest.approx(se)
    assert (res.low, res.high) == pytest.approx((4 / 6 - 1.959963984540054 * se, 4 / 6 + 1.959963984540054 * se))
    assert res.labels_only.mean == pytest.approx(0.75) and res.judge_only.mean == pytest.approx(0.7)
    assert (res.labelled, res.unlabelled, res.lam) == (4, 6, 1.0)


def test_lambda_zero_is_the_labels_alone():
    res = ppi_mean([1, 0, 1, 1, 0], [0.2, 0.9, 0.4, 0.1, 0.3], [0.5, 0.7, 0.1], lam=0)
    assert res.estimate == pytest.approx(0.6)
    assert res.std_error == pytest.approx(math.sqrt(0.24 / 5))


def test_p_value_and_interval_agree():
    rng = random.Random(3)
    for _ in range(200):
        y = [rng.choice((-1.0, 0.0, 1.0)) for _ in range(12)]
        f = [v + rng.gauss(0, 0.7) for v in y]
        fu = [rng.gauss(0.1, 1) for _ in range(40)]
        res = ppi_mean(y, f, fu)
        assert (res.p_value < 0.05) == (res.low > 0 or res.high < 0)


@pytest.mark.parametrize("seed", range(6))
def test_equals_published_ppi_py(seed, monkeypatch):
    np = pytest.importorskip("numpy")
    monkeypatch.syspath_prepend(str(VENDORED))
    import ppi_py

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 40).astype(float)
    f = y * 0.5 + rng.normal(0, 0.4, 40)
    fu = rng.normal(0.25, 0.5, 300)
    for lam in (None, 1.0, 0.3):
        ours = ppi_mean(list(y), list(f), list(fu), lam=lam, confidence=0.9)
        low, high = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.1, lam=lam)
        assert ours.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)[0]))
        assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])))


def test_active_estimator_is_unbiased_and_covers():
    rng = random.Random(11)
    truth = [1.0 if rng.random() < 0.6 else 0.0 for _ in range(400)]
    judged = [min(1.0, max(0.0, y + rng.gauss(0, 0.35))) for y in truth]
    # label uncertain items more often: pi grows with the judge's distance from a clear 0 or 1
    probs = [0.05 + 0.5 * min(f, 1 - f) for f in judged]
    true_mean = sum(truth) / len(truth)
    estimates, covered = [], 0
    for _ in range(400):
        labels = [y if rng.random() < p else None for y, p in zip(truth, probs)]
        res = ppi_active_mean(judged, labels, probs)
        estimates.append(res.estimate)
        covered += res.low <= true_mean <= res.high
    assert sum(estimates) / len(estimates) == pytest.approx(true_mean, abs=0.01)
    assert 0.9 <= covered / 400 <= 0.99


def test_active_rejects_impossible_probabilities():
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        ppi_active_mean([0.1, 0.2, 0.3], [1.0, 0.0, None], [0.5, 0.0, 0.5])


def test_labels_needed_is_the_fewest_that_reach_the_width():
    n = labels_needed(0.5, 0.5, 0.8, 2000, 0.05)
    assert n is not None
    z = 1.959963984540054
    assert z * ppi_std_error(0.5, 0.5, 0.8, n, 2000 - n) <= 0.05 < z * ppi_std_error(0.5, 0.5, 0.8, n - 1, 2001 - n)
    # a judge that agrees better needs fewer labels; one uncorrelated needs what the labels alone need
    assert labels_needed(0.5, 0.5, 0.95, 2000, 0.05) < n < labels_needed(0.5, 0.5, 0.0, 2000, 0.05)
    assert labels_needed(0.5, 0.5, 0.0, 2000, 0.001) is None


def test_mean_interval_needs_two():
    assert mean_interval([1.0]) is None
    assert mean_interval([0.0, 1.0]).mean == 0.5
