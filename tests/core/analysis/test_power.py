"""Statistical power (ragassay.analysis.power): textbook values, the 21-question example, simulated power,
monotonicity, guards, and the plan over a run's values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ragassay.analysis.power import (
    NO_VARIATION,
    PAIRED,
    TOO_FEW,
    UNPAIRED,
    PowerSettings,
    check_settings,
    comparisons,
    mde,
    most_constrained,
    normal_mde,
    normal_samples,
    paired_power,
    plan,
    samples_needed,
    t_power,
    unpaired_power,
)
from ragassay.errors import ConfigError


def test_paired_samples_for_half_an_sd_match_the_textbook():
    # d = 0.5, alpha 0.05 two-sided, power 0.8: 31.4 -> 32 by the normal formula, 34 by the exact t test
    # (G*Power's paired t test gives 34, actual power 0.808)
    assert normal_samples(1.0, 0.5, 0.05, 0.8) == 32
    assert samples_needed(1.0, 0.5, 0.05, 0.8) == (34, "t")
    assert t_power(0.5, 1.0, 34, 0.05) == pytest.approx(0.8078, abs=5e-4)
    assert t_power(0.5, 1.0, 33, 0.05) < 0.8
    # the units do not matter: SD 0.2, effect 0.1 is the same d
    assert samples_needed(0.2, 0.1, 0.05, 0.8) == (34, "t")


def test_unpaired_samples_match_cohens_table():
    # Cohen 1988, Table 2.4.1: two-tailed a = .05, power .80, d = .50 -> n = 64 per group
    assert samples_needed(1.0, 0.5, 0.05, 0.8, UNPAIRED) == (64, "t")
    assert normal_samples(1.0, 0.5, 0.05, 0.8, UNPAIRED) == 63
    # d = .20: the table's 393 is the normal figure (Cohen's own approximation); the exact t test needs one more
    assert normal_samples(1.0, 0.2, 0.05, 0.8, UNPAIRED) == 393
    assert samples_needed(1.0, 0.2, 0.05, 0.8, UNPAIRED) == (394, "t")
    assert t_power(0.2, 1.0, 394, 0.05, UNPAIRED) >= 0.8 > t_power(0.2, 1.0, 393, 0.05, UNPAIRED)


def test_exact_power_matches_a_simulated_t_test():
    """The noncentral-t power is the rejection rate of scipy's own one-sample t test on simulated data."""
    n, sd = 21, 0.24
    effect, method = mde(sd, n, 0.05, 0.8)
    assert method == "t"
    rng = np.random.default_rng(7)
    diffs = rng.normal(effect, sd, size=(40_000, n))
    rejected = stats.ttest_1samp(diffs, 0.0, axis=1).pvalue < 0.05
    assert rejected.mean() == pytest.approx(0.8, abs=0.01)
    two = rng.normal(0, sd, size=(40_000, 2, n))
    two[:, 1] += mde(sd, n, 0.05, 0.8, UNPAIRED)[0]
    rejected = stats.ttest_ind(two[:, 1], two[:, 0], axis=1).pvalue < 0.05
    assert rejected.mean() == pytest.approx(0.8, abs=0.01)


def test_21_questions_cannot_detect_differences_below_about_0_15():
    """The issue's example: 21 questions, per-question differences with SD 0.24 (a 0-1 metric)."""
    detectable, method = mde(0.24, 21, 0.05, 0.8)
    assert method == "t" and 0.14 < detectable < 0.17
    assert normal_mde(0.24, 21, 0.05, 0.8) == pytest.approx(2.8016 * 0.24 / math.sqrt(21), rel=1e-4)
    assert detectable > normal_mde(0.24, 21, 0.05, 0.8)  # the approximation is optimistic at small n
    # a single system with the same per-sample SD, compared on fresh samples, sees only differences above 0.2
    assert mde(0.24, 21, 0.05, 0.8, UNPAIRED)[0] > 0.2
    # detecting 0.03 with that spread needs hundreds of questions
    needed, _ = samples_needed(0.24, 0.03, 0.05, 0.8)
    assert 500 < needed < 520


def test_monotonic_in_n_effect_alpha_and_power():
    mdes = [mde(0.3, n, 0.05, 0.8)[0] for n in (2, 3, 5, 10, 21, 50, 200, 999, 1000, 5000)]
    assert all(a > b for a, b in zip(mdes, mdes[1:]))
    needs = [samples_needed(0.3, e, 0.05, 0.8)[0] for e in (0.5, 0.2, 0.1, 0.05, 0.03, 0.01, 0.001)]
    assert all(a < b for a, b in zip(needs, needs[1:]))
    assert mde(0.3, 30, 0.01, 0.8)[0] > mde(0.3, 30, 0.05, 0.8)[0]
    assert mde(0.3, 30, 0.05, 0.9)[0] > mde(0.3, 30, 0.05, 0.8)[0]
    assert mde(0.3, 30, 0.05, 0.8, UNPAIRED)[0] > mde(0.3, 30, 0.05, 0.8, PAIRED)[0]


def test_mde_and_samples_needed_are_inverse():
    for n in (2, 5, 21, 100):
        detectable, _ = mde(0.3, n, 0.05, 0.8)
        assert samples_needed(0.3, detectable * (1 + 1e-6), 0.05, 0.8)[0] == n
        assert samples_needed(0.3, detectable * 0.99, 0.05, 0.8)[0] > n


def test_large_samples_use_the_closed_form():
    assert mde(1.0, 5000, 0.05, 0.8) == (pytest.approx(2.8016 / math.sqrt(5000), rel=1e-4), "normal")
    needed, method = samples_needed(0.3, 0.005, 0.05, 0.8)
    assert method == "normal" and needed == math.ceil((2.80158 * 0.3 / 0.005) ** 2)


def test_paired_power_uses_shared_samples_in_a_fixed_order():
    a = {"q1": 0.0, "q2": 1.0, "q3": 0.5, "q4": 1.0}
    b = {"q4": 1.0, "q3": 1.0, "q2": 0.5, "q1": 1.0, "q9": 0.0}
    estimate = paired_power("m", a, b, PowerSettings(effect=0.1))
    assert estimate.n == 4 and estimate.design == PAIRED
    assert estimate.sd == pytest.approx(np.std([1.0, -0.5, 0.5, 0.0], ddof=1))
    assert estimate.mde == pytest.approx(mde(estimate.sd, 4, 0.05, 0.8)[0])
    assert estimate.needed == samples_needed(estimate.sd, 0.1, 0.05, 0.8)[0]
    assert paired_power("m", dict(reversed(a.items())), b, PowerSettings(effect=0.1)) == estimate


def test_no_variation_and_too_few_samples_are_reasons_not_numbers():
    same = paired_power("exact", {"q1": 1.0, "q2": 0.0}, {"q1": 1.0, "q2": 0.0}, PowerSettings(effect=0.1))
    assert same.mde is None and same.needed is None and same.sd == 0.0
    assert same.reason == NO_VARIATION.format(what="difference")
    one = unpaired_power("exact", {"q1": 1.0}, PowerSettings())
    assert one.mde is None and one.sd is None and one.reason == TOO_FEW
    none = paired_power("exact", {"q1": 1.0}, {"q2": 1.0}, PowerSettings())
    assert none.n == 0 and none.reason == TOO_FEW
    # binary values with some variation are fine
    binary = unpaired_power("exact", {f"q{i}": float(i % 2) for i in range(10)}, PowerSettings())
    assert binary.mde is not None and binary.reason is None


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        (PowerSettings(alpha=0.0), "--alpha 0.0 is outside (0, 1)"),
        (PowerSettings(alpha=1.0), "--alpha 1.0 is outside (0, 1)"),
        (PowerSettings(power=1.2), "--power 1.2 is outside (0, 1)"),
        (PowerSettings(effect=0.0), "--effect 0.0 is not a positive difference"),
        (PowerSettings(effect=-0.1), "--effect -0.1 is not a positive difference"),
        (PowerSettings(effect=float("nan")), "--effect nan is not a positive difference"),
        (PowerSettings(comparisons=0), "comparisons must be at least 1"),
    ],
)
def test_bad_settings_are_config_errors(settings, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        check_settings(settings)


def test_bonferroni_divides_alpha():
    settings = PowerSettings(comparisons=4)
    assert settings.level == pytest.approx(0.0125)
    values = {f"q{i}": (i * 37 % 11) / 10 for i in range(30)}
    strict = unpaired_power("m", values, settings)
    assert strict.alpha == pytest.approx(0.0125)
    assert strict.mde == pytest.approx(mde(strict.sd, 30, 0.0125, 0.8, UNPAIRED)[0])
    assert strict.mde > unpaired_power("m", values, PowerSettings()).mde


VALUES = {
    ("a", "m1"): {"q1": 0.0, "q2": 0.5, "q3": 1.0, "q4": 0.5},
    ("b", "m1"): {"q1": 0.5, "q2": 0.5, "q3": 1.0, "q4": 1.0},
    ("c", "m1"): {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 1.0},
    ("a", "m2"): {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 1.0},
    ("b", "m2"): {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 1.0},
    ("c", "m2"): {"q1": 1.0, "q2": 0.0, "q3": 1.0},
}


def test_plan_compares_every_system_with_the_baseline():
    rows = plan(VALUES, ["a", "b", "c"], ["m1", "m2"], PowerSettings(effect=0.2))
    assert [(r.estimate.metric, r.system, r.baseline) for r in rows] == [
        ("m1", "b", "a"),
        ("m1", "c", "a"),
        ("m2", "b", "a"),
        ("m2", "c", "a"),
    ]
    assert rows[2].estimate.reason == NO_VARIATION.format(what="difference")
    assert rows[3].estimate.n == 3
    worst = most_constrained(rows)
    assert worst is rows[1] and worst.estimate.needed == max(r.estimate.needed or 0 for r in rows)
    against_c = plan(VALUES, ["a", "b", "c"], ["m1"], PowerSettings(), baseline="c")
    assert [r.system for r in against_c] == ["a", "b"]
    assert most_constrained(against_c).estimate.mde == max(r.estimate.mde for r in against_c)
    assert comparisons(["a", "b", "c"], ["m1", "m2"]) == 4 and comparisons(["a"], ["m1", "m2"]) == 2


def test_plan_with_one_system_is_unpaired_and_names_bad_baselines():
    (row,) = plan(VALUES, ["c"], ["m1"], PowerSettings())
    assert row.baseline is None and row.estimate.design == UNPAIRED and row.estimate.n == 4
    with pytest.raises(ConfigError, match="--baseline 'z' is not a system of the run. Its systems: a, b"):
        plan(VALUES, ["a", "b"], ["m1"], PowerSettings(), baseline="z")
    assert most_constrained(plan(VALUES, ["a", "b"], ["m2"], PowerSettings())) is None
