"""ragassay.analysis.verdicts: verdict words, the declared family, Tarone, rounding, not comparable, determinism."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ragassay.analysis.bootstrap import bootstrap_mean_ci
from ragassay.analysis.sentences import verdict_sentences
from ragassay.analysis.verdicts import decide_values
from ragassay.errors import ConfigError


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
    assert b.effect_size > 2 and 0 < b.mde < 0.1 and b.reason == "" and b.level < 0.05
    assert all(p.decided == (not p.ci_low <= 0 <= p.ci_high) for p in verdicts.pairs)
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
    ids = sorted(f"q{i}" for i in range(40))  # samples in sorted id order unless an order is given
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
    assert all(p.p_value is None and p.p_holm is None for p in lonely) and lonely[1].mean_diff is None
    assert verdict_sentences(verdicts)[-1].startswith("d and c (baseline) cannot be compared on")
    assert verdicts.baseline == "c" and all(p.baseline == "c" for p in verdicts.pairs)
    with pytest.raises(ConfigError, match="--baseline 'z' is not a system of the run. Its systems: a, b, c"):
        decide_values(values, systems, metrics, directions, baseline="z")


def test_holm_spans_the_family_and_the_family_is_declared():
    values, systems, metrics, directions = synthetic()
    verdicts = decide_values(values, systems, metrics, directions)
    assert verdicts.family == ["quality", "loss"] and verdicts.compared == 4
    only = decide_values(values, systems, metrics, directions, family=["quality"])
    assert only.family == ["quality"] and only.compared == 2
    loss = [p for p in only.pairs if p.metric == "loss"]
    assert {p.verdict for p in loss} == {"not in the decision family"} and all(p.p_holm is None for p in loss)
    assert all(p.level == 0.05 and p.ci_low is not None for p in loss)  # described at the nominal level
    assert "Not decided (not in [evaluation] decide): loss." in verdict_sentences(only)
    with pytest.raises(ConfigError, match="decide names f1, which the run did not score"):
        decide_values(values, systems, metrics, directions, family=["f1"])


def test_constant_metrics_leave_the_default_family_and_say_so():
    values, systems, metrics, directions = synthetic()
    for system in systems:
        values[(system, "em")] = {f"q{i}": 0.0 for i in range(40)}
    verdicts = decide_values(values, systems, [*metrics, "em"], directions)
    assert verdicts.constant == ["em"] and "em" not in verdicts.family and verdicts.compared == 4
    assert verdict_sentences(verdicts)[-1] == "Left out of the decision, equal on every system and sample: em."


def test_the_issue_case_is_too_few_to_decide_not_no_difference():
    ids = [f"q{i:02d}" for i in range(21)]
    top3 = {q: 1.0 if i < 20 else 0.0 for i, q in enumerate(ids)}  # 0.952
    top1 = {q: 1.0 if i < 16 else 0.0 for i, q in enumerate(ids)}  # 0.762: 4 samples drop
    values = {("k3", "recall_at_k"): top3, ("k1", "recall_at_k"): top1}
    pair = decide_values(values, ["k3", "k1"], ["recall_at_k"], {}).pairs[0]
    assert pair.verdict == "too few differing samples" and pair.n_discordant == 4
    assert pair.mean_diff == pytest.approx(-4 / 21) and pair.ci_low < pair.mean_diff and pair.ci_high == 0.0
    words = verdict_sentences(decide_values(values, ["k3", "k1"], ["recall_at_k"], {}))
    assert words[0].startswith("Too few differing samples to decide between k1 and k3 (baseline) on recall_at_k")
    assert "differ on 4 of 21" in words[0] and not any("No detectable" in w for w in words)


def test_an_exact_shift_is_decided_without_rounding_residues():
    rng = np.random.default_rng(2)
    base = rng.random(21)
    values = {("a", "m"): dict(zip(map(str, range(21)), base.tolist()))}
    values[("b", "m")] = dict(zip(map(str, range(21)), (base + 1 / 3).tolist()))
    pair = decide_values(values, ["a", "b"], ["m"], {}).pairs[0]
    assert pair.verdict == "better" and pair.effect_size is None and pair.mde is None
    assert not any("e-1" in s for s in verdict_sentences(decide_values(values, ["a", "b"], ["m"], {})))


SCRIPT = """
import sys; sys.path.insert(0, {here!r})
from test_verdicts import synthetic
from ragassay.analysis.verdicts import decide_values
values, systems, metrics, directions = synthetic(n=30)
print(repr(decide_values(values, systems, metrics, directions, seed=5)))
"""


def test_same_seed_same_numbers_across_processes(tmp_path):
    from pathlib import Path

    script = SCRIPT.format(here=str(Path(__file__).resolve().parent))
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
    assert {p.verdict for p in verdicts.pairs if p.metric == "quality"} == {"no detectable difference"}
    sentences = verdict_sentences(verdicts)
    assert len(sentences) == 2
    quality = next(s for s in sentences if "on quality" in s)
    assert quality.startswith("No detectable difference on quality for b (")
    assert "against a (baseline) (n = 30; differences below" in quality and "cannot be detected" in quality
    assert "Left out of the decision, equal on every system and sample: flat." in sentences
