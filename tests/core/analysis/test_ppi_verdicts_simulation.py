"""The done-when simulation of issue 41, section 1: a judge whose errors differ between two systems biases the
judge-only verdict, while the prediction-powered interval of the paired difference covers the true difference at
the nominal rate and is narrower than the labels alone at the same number of labels.

Each of 1,000 seeded replications draws a fresh set of samples (each system's answer correct or not, the judge's
verdict of each answer, and a uniformly random labelled subset), so the true difference is known exactly:
P(B correct) - P(A correct). The judge misses 30% of A's correct answers but only 5% of B's (and calls 10% of
either's wrong answers correct), so it overstates B's lead from 0.10 to 0.235.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.analysis.meta_eval import Confusion, cohen_kappa
from ragassay.analysis.ppi_verdicts import decide_family, pair_data

SAMPLES, LABELLED, DRAWS, ALPHA = 600, 150, 1_000, 0.05
P_CORRECT = {"a": 0.60, "b": 0.70}
MISSED = {"a": 0.30, "b": 0.05}  # the judge calls a correct answer wrong
FALSE_ALARM = 0.10  # the judge calls a wrong answer correct
TRUE_DIFFERENCE = P_CORRECT["b"] - P_CORRECT["a"]
MONTE_CARLO = 3 * np.sqrt(0.95 * 0.05 / DRAWS)  # three standard errors of a coverage estimated from DRAWS draws


def draw(rng: np.random.Generator) -> dict:
    """One replication: truth and judge per system, and which samples people labelled (both answers)."""
    out = {}
    for system in ("a", "b"):
        truth = rng.random(SAMPLES) < P_CORRECT[system]
        noise = rng.random(SAMPLES)
        out[system] = (truth.astype(float), np.where(truth, noise >= MISSED[system], noise < FALSE_ALARM).astype(float))
    out["labelled"] = set(rng.choice(SAMPLES, LABELLED, replace=False).tolist())
    return out


@pytest.fixture(scope="module")
def replications():
    rng = np.random.default_rng(20260412)
    rows = []
    for _ in range(DRAWS):
        data = draw(rng)
        (ya, fa), (yb, fb) = data["a"], data["b"]
        ids = [str(i) for i in range(SAMPLES)]

        def y_diff(q: str, labelled=data["labelled"], ya=ya, yb=yb) -> float | None:
            return float(yb[int(q)] - ya[int(q)]) if int(q) in labelled else None

        item = pair_data(("b", "correct"), ids, fa, fb, y_diff, (LABELLED, LABELLED))
        result, level, _ = decide_family([item], ALPHA)[0]
        picked = sorted(data["labelled"])
        kappa = cohen_kappa(
            Confusion.of(
                [bool(v) for v in np.concatenate([ya[picked], yb[picked]])],
                [bool(v) for v in np.concatenate([fa[picked], fb[picked]])],
            )
        )
        rows.append((result, level, kappa))
    return rows


def covers(low: float, high: float) -> bool:
    return low <= TRUE_DIFFERENCE <= high


def test_the_judge_agrees_with_people_at_kappa_at_least_0_4(replications):
    kappas = np.array([kappa for _, _, kappa in replications])
    assert kappas.mean() >= 0.4 and np.quantile(kappas, 0.05) >= 0.4


def test_judge_only_intervals_are_biased_and_miss_the_true_difference(replications):
    judge = [result.judge_only for result, _, _ in replications]
    assert np.mean([j.mean for j in judge]) == pytest.approx(0.235, abs=0.01)  # B's lead as the judge sees it
    missed = np.mean([not covers(j.low, j.high) for j in judge])
    assert missed > 0.5  # far more than the 5% a valid interval misses


def test_ppi_intervals_cover_the_true_difference_at_the_nominal_rate(replications):
    assert all(level == ALPHA for _, level, _ in replications)  # a family of one: Holm's level is alpha
    coverage = np.mean([covers(result.low, result.high) for result, _, _ in replications])
    assert abs(coverage - 0.95) <= MONTE_CARLO, coverage
    estimates = np.array([result.estimate for result, _, _ in replications])
    assert abs(estimates.mean() - TRUE_DIFFERENCE) < 0.005  # unbiased, unlike the judge


def test_ppi_is_narrower_than_the_labels_alone_at_the_same_labels(replications):
    ppi = np.array([result.width for result, _, _ in replications])
    alone = np.array([result.labels_only.width for result, _, _ in replications])
    assert all(result.labelled == LABELLED for result, _, _ in replications)
    assert ppi.mean() < 0.95 * alone.mean()
    assert np.mean(ppi < alone) > 0.9


def test_the_verdict_is_read_off_the_interval(replications):
    for result, level, _ in replications[:200]:
        decided = result.p_value <= level
        assert decided == (result.low > 0 or result.high < 0)
    assert np.mean([result.low > 0 for result, _, _ in replications]) > 0.3  # B's true lead is often shown
