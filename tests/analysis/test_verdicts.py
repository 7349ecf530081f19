"""ragassay.analysis.verdicts: permutation p-values, Holm, verdict words, not comparable, determinism, shape."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import permutation_test

from ragassay.analysis.bootstrap import bootstrap_mean_ci
from ragassay.analysis.verdicts import (
    FLIPS,
    decide_values,
    holm,
    sign_flip_p_values,
    verdict_sentences,
)
from ragassay.errors import ConfigError


def scipy_p(d, resamples=10**6):
    return permutation_test((d,), np.mean, permutation_type="samples", n_resamples=resamples).pvalue


@pytest.mark.parametrize("n, shift, seed", [(5, 0.5, 0), (8, 0.3, 1), (12, 0.0, 2), (10, 1.0, 3)])
def test_exact_sign_flip_p_matches_scipy(n, shift, seed):
    d = np.random.default_rng(seed).normal(shift, 1.0, n)
    assert sign_flip_p_values(d[:, None])[0] == pytest.approx(scipy_p(d), abs=1e-12)


def test_exact_p_counts_ties_as_scipy_does():
    d = np.array([0.5, 0.5, -0.5, 0.5, 0.0, 0.5, 1.0])  # many equal |sums|
    assert sign_flip_p_values(d[:, None])[0] == pytest.approx(scipy_p(d), abs=1e-12)


def test_sampled_p_agrees_with_scipy_exact_and_never_is_zero():
    d = np.random.default_rng(4).normal(0.25, 1.0, 16)
    p = sign_flip_p_values(d[:, None], seed=0)[0]
    assert p == pytest.approx(scipy_p(d, 2**16), abs=0.015)  # 10,000 flips: sd of p about 0.004
    far = np.full(30, 1.0) + np.linspace(0, 0.1, 30)
    assert sign_flip_p_values(far[:, None])[0] == pytest.approx(1 / (FLIPS + 1))


def test_p_value_columns_are_independent_of_missing_pairs():
    rng = np.random.default_rng(5)
    d = rng.normal(0.2, 1.0, (40, 2))
    d[30:, 1] = np.nan  # the second pair has 30 samples
    both = sign_flip_p_values(d)
    assert both[1] is not None and 0 < both[1] <= 1
    d1 = np.full((1, 1), 0.3)
    assert sign_flip_p_values(d1) == [None]  # fewer than 2 pairs


def test_holm_by_hand():
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> max so far 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([]) == []


def synthetic(n=40, seed=0):
    """a: baseline; b: clearly higher on both metrics; c: same as a plus noise; 'loss' is lower-is-better."""
    rng = np.random.default_rng(seed)
    base = rng.random((n, 2))
    scores = {"a": base, "b": base + 0.2 + rng.normal(0, 0.05, (n, 2)), "c": base + rng.normal(0, 0.05, (n, 2))}
    values = {
        (system, metric): {f"q{i}": float(x[i, j]) for i in range(n)}
        for system, x in scores.items()
        for j, metric in enumerate(["quality", "loss"])
    }
    return values, ["a", "b", "c"], ["quality", "loss"], {"quality": "higher", "loss": "lower"}


def test_verdict_words_follow_the_metric_direction():
    values, systems, metrics, directions = synthetic()
    verdicts = decide_values(values, systems, metrics, directions, run_id="r1")
    pairs = {(p.system, p.metric): p for p in verdicts.pairs}
    assert set(pairs) == {("b", "quality"), ("c", "quality"), ("b", "loss"), ("c", "loss")}
    assert pairs[("b", "quality")].verdict == "better" and pairs[("b", "loss")].verdict == "worse"
    assert pairs[("c", "quality")].verdict == "no detectable difference"
    b = pairs[("b", "quality")]
    assert b.baseline == "a" and b.n == 40 and b.mean_diff == pytest.approx(0.2, abs=0.03)
    assert b.ci_low < b.mean_diff < b.ci_high and b.p_value <= b.p_holm < 0.05
    assert b.effect_size > 2 and 0 < b.mde < 0.1 and b.reason == ""
    sentences = verdict_sentences(verdicts)
    assert sentences[0].startswith("b beats a (baseline) on quality by +0.") or sentences[0].startswith(
        "b is worse than a (baseline) on loss by +0."
    )
    assert any(s.startswith("No detectable difference between c and a (baseline) on quality") for s in sentences)
    assert all("differences below" in s for s in sentences if s.startswith("No detectable"))


def test_cells_carry_bca_intervals_and_counts():
    values, systems, metrics, directions = synthetic()
    del values[("c", "loss")]["q0"]
    verdicts = decide_values(values, systems, metrics, directions, seed=3, unscored={("c", "loss"): 1})
    cell = next(c for c in verdicts.cells if (c.system, c.metric) == ("c", "loss"))
    assert cell.n == 39 and cell.unscored == 1 and cell.direction == "lower"
    ids = sorted(f"q{i}" for i in range(40))  # samples in sorted id order, as decide_values resamples them
    column = np.array([values[("c", "loss")].get(q, np.nan) for q in ids])
    expected = bootstrap_mean_ci(column, n_resamples=1000, seed=3, method="BCa")
    assert (cell.mean, cell.ci_low, cell.ci_high) == pytest.approx((expected.mean, expected.ci_low, expected.ci_high))


def test_not_comparable_and_baseline_choice():
    values, systems, metrics, directions = synthetic()
    values[("d", "quality")] = {"q0": 0.5}  # one shared sample; nothing on 'loss'
    verdicts = decide_values(values, [*systems, "d"], metrics, directions, baseline="c")
    lonely = [p for p in verdicts.pairs if p.system == "d"]
    assert [p.verdict for p in lonely] == ["not comparable"] * 2
    assert "fewer than 2 samples scored by both d and c (1)" in lonely[0].reason and lonely[1].n == 0
    assert all(p.p_value is None and p.p_holm is None and p.mean_diff is None for p in lonely)
    assert verdict_sentences(verdicts)[-1].startswith("d and c (baseline) cannot be compared on")
    assert verdicts.baseline == "c" and all(p.baseline == "c" for p in verdicts.pairs)
    with pytest.raises(ConfigError, match="--baseline 'z' is not a system of the run. Its systems: a, b, c"):
        decide_values(values, systems, metrics, directions, baseline="z")


def test_holm_spans_every_pair_and_metric():
    values, systems, metrics, directions = synthetic()
    verdicts = decide_values(values, systems, metrics, directions)
    raw = [p.p_value for p in verdicts.pairs]
    assert [p.p_holm for p in verdicts.pairs] == pytest.approx(holm(raw))


SCRIPT = """
import sys; sys.path.insert(0, {tests!r})
from analysis.test_verdicts import synthetic
from ragassay.analysis.verdicts import decide_values
values, systems, metrics, directions = synthetic(n=30)
print(repr(decide_values(values, systems, metrics, directions, seed=5)))
"""


def test_same_seed_same_numbers_across_processes(tmp_path):
    from pathlib import Path

    script = SCRIPT.format(tests=str(Path(__file__).resolve().parent.parent))
    outputs = [
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env={"PYTHONHASHSEED": seed}, check=True
        ).stdout
        for seed in ("1", "2")
    ]
    assert outputs[0] == outputs[1] and "PairVerdict" in outputs[0]
    values, systems, metrics, directions = synthetic(n=30)
    assert repr(decide_values(values, systems, metrics, directions, seed=5)) == outputs[0].strip()
    other = decide_values(values, systems, metrics, directions, seed=6)
    assert repr(other) != outputs[0].strip()  # the seed does drive the draws


def test_ten_thousand_samples_four_systems_six_metrics_has_every_cell_and_pair():
    rng = np.random.default_rng(0)
    systems, metrics = ["s0", "s1", "s2", "s3"], [f"m{j}" for j in range(6)]
    base = rng.random((10_000, 6))
    values = {
        (s, m): dict(zip((f"q{i}" for i in range(10_000)), (base[:, j] + 0.01 * k).tolist()))
        for k, s in enumerate(systems)
        for j, m in enumerate(metrics)
    }
    verdicts = decide_values(values, systems, metrics, {})
    assert len(verdicts.cells) == 24 and len(verdicts.pairs) == 18
    assert all(c.n == 10_000 and c.ci_low < c.mean < c.ci_high for c in verdicts.cells)
    assert all(p.n == 10_000 and p.verdict == "better" for p in verdicts.pairs)


def test_pairs_without_a_detectable_difference_are_one_line_per_metric():
    rng = np.random.default_rng(11)
    base = rng.random(30)
    scores = {"a": base, **{system: base + rng.normal(0, 0.05, 30) for system in ("b", "c", "d")}}
    values = {(system, "quality"): {f"q{i}": float(x[i]) for i in range(30)} for system, x in scores.items()}
    values |= {(system, "flat"): {f"q{i}": 1.0 for i in range(30)} for system in scores}
    directions = {"quality": "higher", "flat": "higher"}
    verdicts = decide_values(values, ["a", "b", "c", "d"], ["quality", "flat"], directions)
    assert {p.verdict for p in verdicts.pairs} == {"no detectable difference"}
    sentences = verdict_sentences(verdicts)
    assert len(sentences) == 2
    quality = next(s for s in sentences if "on quality" in s)
    assert quality.startswith("No detectable difference on quality for b (")
    assert "against a (baseline) (n = 30; differences below" in quality and "cannot be detected" in quality
    flat = next(s for s in sentences if "on flat" in s)
    assert flat == "No difference between b, c, d and a (baseline) on flat: equal on every sample (n = 30)."
