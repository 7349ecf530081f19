"""Judge meta-evaluation statistics against hand computations: the 2x2 table, kappa, bootstrap, PPI, thresholds."""

from __future__ import annotations

import math
import statistics

import pytest

from ragassay.analysis.meta_eval import (
    Confusion,
    accuracy,
    choose_threshold,
    cohen_kappa,
    evaluate_detector,
    kappa_interval,
    ppi_mean,
    precision,
    recall,
    specificity,
    wilson_interval,
    youden_j,
)


def table(tp: int, fp: int, fn: int, tn: int) -> tuple[list[bool], list[bool]]:
    """(truth, judged) lists with exactly these counts."""
    truth = [True] * tp + [False] * fp + [True] * fn + [False] * tn
    judged = [True] * tp + [True] * fp + [False] * fn + [False] * tn
    return truth, judged


def test_confusion_counts_a_tiny_table():
    # answers:  correct correct correct wrong  wrong
    # judge:    yes     yes     no      yes    no
    c = Confusion.of([True, True, True, False, False], [True, True, False, True, False])
    assert (c.tp, c.fp, c.fn, c.tn, c.n) == (2, 1, 1, 1, 5)
    assert precision(c) == pytest.approx(2 / 3)  # of 3 called correct, 2 are
    assert recall(c) == pytest.approx(2 / 3)  # of 3 correct, 2 called correct
    assert accuracy(c) == pytest.approx(3 / 5)
    assert specificity(c) == pytest.approx(1 / 2)
    assert youden_j(c) == pytest.approx(2 / 3 + 1 / 2 - 1)


def test_kappa_by_hand():
    # tp 20, fp 5, fn 10, tn 15: p_o = 35/50 = 0.7; p_t = 30/50 = 0.6; p_j = 25/50 = 0.5;
    # p_e = 0.6 * 0.5 + 0.4 * 0.5 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    assert cohen_kappa(Confusion(20, 5, 10, 15)) == pytest.approx(0.4)
    # perfect agreement 1, perfect disagreement -1 (with balanced margins), chance-level agreement exactly 0 (no rounding residue)
    assert cohen_kappa(Confusion(3, 0, 0, 2)) == 1.0
    assert cohen_kappa(Confusion(0, 3, 3, 0)) == -1.0  # balanced margins; (0, 2, 3, 0) gives -0.48/0.52
    assert cohen_kappa(Confusion(0, 2, 3, 0)) == pytest.approx(-0.48 / 0.52)
    assert cohen_kappa(Confusion(0, 0, 52, 8)) == 0.0


def test_undefined_statistics_are_none_never_nan():
    nobody_called_correct = Confusion(0, 0, 4, 6)
    assert precision(nobody_called_correct) is None and recall(nobody_called_correct) == 0.0
    all_correct_all_called = Confusion(5, 0, 0, 0)
    assert cohen_kappa(all_correct_all_called) is None and specificity(all_correct_all_called) is None
    assert youden_j(all_correct_all_called) is None
    empty = Confusion()
    assert accuracy(empty) is None and cohen_kappa(empty) is None


def test_evaluate_detector_leaves_unscored_out_and_counts_them():
    report = evaluate_detector("j", [True, True, False, False], [True, None, False, None], resamples=200)
    assert report.confusion == Confusion(1, 0, 0, 1) and report.unscored == 2
    row = report.as_row()
    assert row["n"] == 2 and row["unscored"] == 2 and row["accuracy"] == 1.0 and row["kappa"] == 1.0
    assert report.accuracy.method == "Wilson" and report.kappa.method == "bootstrap"


def test_wilson_interval_by_hand_and_inside_zero_one():
    # 9 of 12: p = 0.75, z = 1.95996; centre = (0.75 + z^2/24) / (1 + z^2/12), half = z/(1 + z^2/12) sqrt(p q/12 + z^2/576)
    z = statistics.NormalDist().inv_cdf(0.975)
    centre = (0.75 + z * z / 24) / (1 + z * z / 12)
    half = z / (1 + z * z / 12) * math.sqrt(0.75 * 0.25 / 12 + z * z / 576)
    assert wilson_interval(9, 12) == pytest.approx((centre - half, centre + half))
    assert wilson_interval(9, 12) == pytest.approx((0.4677, 0.9111), abs=1e-4)  # Wald would give [0.505, 0.995]
    low, high = wilson_interval(12, 12)
    assert high == 1.0 and 0.7 < low < 0.8  # all successes: inside [0, 1], never past 1
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(0, 0) is None


def test_proportions_never_leave_zero_one_where_the_old_interval_did():
    # the case: accuracy 0.750 printed as [0.494, 1.006] by a normal approximation
    truth, judged = table(9, 2, 1, 0)  # 9 right of 12
    report = evaluate_detector("j", truth, judged)
    for stat in (report.precision, report.recall, report.accuracy):
        assert 0.0 <= stat.low <= stat.value <= stat.high <= 1.0
    assert report.accuracy.value == 0.75 and report.accuracy.high < 1.0


def test_kappa_bootstrap_is_seeded_and_brackets_the_estimate():
    truth, judged = table(30, 10, 8, 22)
    pairs = list(zip(truth, judged))
    first = kappa_interval(pairs, resamples=500, seed=3)
    assert first == kappa_interval(pairs, resamples=500, seed=3)
    assert first != kappa_interval(pairs, resamples=500, seed=4)
    low, high = first
    assert -1 <= low < cohen_kappa(Confusion.of(truth, judged)) < high <= 1
    assert kappa_interval([(True, True)] * 5, resamples=50) is None  # undefined in every resample


def test_ppi_against_a_hand_computation():
    # unlabelled judge f = 1 1 0 1 (N = 4); labelled f = 1 0 1 with labels y = 1 0 0 (n = 3)
    est = ppi_mean([1, 1, 0, 1], [1, 0, 1], [1, 0, 0])
    # rectifier = mean(f - y) = mean(0, 0, 1) = 1/3; estimate = 3/4 - 1/3 = 5/12
    assert est.rectifier == pytest.approx(1 / 3)
    assert est.estimate == pytest.approx(5 / 12)
    # var(f unlabelled) = 0.75 / 3 = 0.25; var(residuals) = (2/9 + 4/9) / 2 = 1/3
    # half width = z * sqrt(0.25 / 4 + (1/3) / 3) = z * sqrt(0.1736...) = z * 5/12
    z = statistics.NormalDist().inv_cdf(0.975)
    assert est.ci == pytest.approx((5 / 12 - z * 5 / 12, 5 / 12 + z * 5 / 12))
    # the labels alone: mean 1/3, var 1/3, half width z * sqrt(1/9)
    assert est.classical == pytest.approx(1 / 3)
    assert est.classical_ci == pytest.approx((1 / 3 - z / 3, 1 / 3 + z / 3))
    assert est.judge_mean == pytest.approx(5 / 7) and (est.labelled, est.unlabelled) == (3, 4)


def test_ppi_removes_a_judge_bias_the_labels_measure():
    # a judge that calls everything correct, on a system that is right half the time
    labels = [1, 0] * 20
    est = ppi_mean([1.0] * 200, [1.0] * 40, labels)
    assert est.judge_mean == 1.0
    assert est.estimate == pytest.approx(0.5)  # 1 - mean(1 - y) = mean(y)
    # the judge is constant, so its half of the variance is 0: PPI's interval is the classical one
    assert est.ci == pytest.approx(est.classical_ci)


def test_ppi_with_a_good_judge_is_narrower_than_the_labels_alone():
    truth = [1, 1, 0, 1, 0, 1, 1, 0, 1, 1] * 3
    judged = list(truth)
    judged[0] = 0  # one mistake in 30
    unlabelled = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 30
    est = ppi_mean(unlabelled, judged, truth)
    assert est.ci[1] - est.ci[0] < est.classical_ci[1] - est.classical_ci[0]


def test_ppi_of_a_rate_stays_inside_zero_one():
    # the case: a PPI interval [0.530, 1.192] for a share of correct answers
    est = ppi_mean([1.0] * 8 + [0.0] * 2, [1.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], rate=True)
    loose = ppi_mean([1.0] * 8 + [0.0] * 2, [1.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0])
    assert loose.ci[0] < 0  # estimate 0.3, half width 0.62: the plain interval claims a negative share
    assert est.ci == (0.0, loose.ci[1]) and est.estimate == pytest.approx(0.3)
    assert est.classical_ci == wilson_interval(1, 4)


def test_ppi_needs_two_of_each_for_an_interval():
    est = ppi_mean([1.0], [1.0, 0.0], [1.0, 1.0])
    # rectifier mean(0, -1) = -0.5: the estimate 1 + 0.5 is not clipped to [0, 1] (clipping would bias it)
    assert est.estimate == pytest.approx(1.5) and est.ci is None and est.classical_ci is not None
    assert ppi_mean([], [1.0, 0.0], [1.0, 0.0]).estimate is None
    with pytest.raises(ValueError):
        ppi_mean([1.0], [1.0], [])


def test_choose_threshold_maximises_youden_and_breaks_ties_low():
    scores = [0.9, 0.8, 0.6, 0.55, 0.3, 0.2]
    truth = [True, True, False, True, False, False]

    def judge_at(t):
        return [s >= t for s in scores]

    threshold, confusion = choose_threshold([0.1, 0.5, 0.7, 0.85], truth, judge_at)
    # 0.1: J 0; 0.5: recall 1, spec 2/3 -> 2/3; 0.7: recall 2/3, spec 1 -> 2/3; 0.85: 1/3
    assert threshold == 0.5 and confusion == Confusion(3, 1, 0, 2)
    threshold, _ = choose_threshold([0.85, 0.7, 0.5, 0.1], truth, judge_at)
    assert threshold == 0.5
    assert math.isclose(choose_threshold([0.7], truth, judge_at, criterion=accuracy)[0], 0.7)
