"""The gate decided on people's labels (``gate --labelled``), the one join of labels to outputs, and the scale map
of a metric onto a rubric."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.analysis.gate import GateSettings
from ragassay.analysis.gate_summary import markdown_summary
from ragassay.analysis.human_labels import HumanLabel, rubric_of
from ragassay.analysis.ppi import ppi_mean
from ragassay.analysis.ppi_decisions import ppi_gate
from ragassay.analysis.ppi_labels import judge_scale, matched_items, parse_labelled
from ragassay.errors import ConfigError
from ragassay.results import read_run

from written_runs import write_run

N, LABELLED = 40, 20


def label(run_id, q, system, value, rubric="correct", annotator="ann", at=0.0, systems=None):
    return HumanLabel(run_id, q, system, systems, rubric, 1, annotator, value, at)


@pytest.fixture
def runs(tmp_path):
    """A baseline run and a candidate run of one system s: the metric says the candidate kept its level, the
    people's labels say it dropped 0.5 on the labelled samples."""
    rng = np.random.default_rng(3)
    base_truth = (rng.random(N) < 0.9).astype(float)
    cand_truth = (rng.random(N) < 0.4).astype(float)
    metric = {"base": base_truth, "cand": np.where(rng.random(N) < 0.5, 1.0, cand_truth)}  # errs up on cand
    path = tmp_path / "r.db"
    s1, _ = write_run(path, {"s": [{"metrics": {"m": float(v)}} for v in metric["base"]]}, run_id="base-run")
    s1.close()
    store, _ = write_run(path, {"s": [{"metrics": {"m": float(v)}} for v in metric["cand"]]}, run_id="cand-run")
    runs = read_run(store, "cand-run"), read_run(store, "base-run")
    store.close()
    labels = [label("base-run", f"q{i:03d}", "s", base_truth[i]) for i in range(LABELLED)]
    labels += [label("cand-run", f"q{i:03d}", "s", cand_truth[i]) for i in range(LABELLED)]
    return runs, labels, metric, (base_truth, cand_truth)


def test_the_gate_fails_a_regression_the_judge_hides(runs):
    (candidate, baseline), labels, metric, (yb, yc) = runs
    settings = GateSettings(margin=0.02)
    result = ppi_gate(candidate, baseline, settings, labels, parse_labelled(["m=correct"]))
    (row,) = result.rows
    (pair,) = result.ppi
    f = metric["cand"] - metric["base"]
    want = ppi_mean(list(yc[:LABELLED] - yb[:LABELLED]), list(f[:LABELLED]), list(f[LABELLED:]), null=-0.02)
    assert row.mean_diff == pytest.approx(want.estimate) and (row.ci_low, row.ci_high) == pytest.approx(
        (want.low, want.high)
    )
    assert row.outcome == "regression" and result.exit_code == 1
    assert pair.estimate < pair.judge_mean - 0.1  # the judge, erring up on the candidate, understates the drop
    assert pair.labels_baseline == pair.labels_system == pair.labelled == LABELLED
    text = markdown_summary(result)
    assert "### Decided on people's labels (prediction-powered)" in text and "20 / 20 (20)" in text


def test_the_gate_with_too_few_labels_is_inconclusive(runs):
    (candidate, baseline), labels, *_ = runs
    result = ppi_gate(
        candidate, baseline, GateSettings(), labels[:1] + labels[LABELLED:], parse_labelled(["m=correct"])
    )
    (row,) = result.rows
    assert row.outcome == "inconclusive" and row.reason == "undecided: 1 labels, need 2" and result.exit_code == 1


def test_a_preference_cannot_decide_the_gate(runs):
    (candidate, baseline), labels, *_ = runs
    pref = [label("cand-run", "q000", None, 1.0, "preference", systems=("s", "t"))]
    with pytest.raises(ConfigError, match="a preference compares two systems of one run"):
        ppi_gate(candidate, baseline, GateSettings(), labels + pref, parse_labelled(["m=preference"]))


def test_matched_labels_take_each_annotators_latest_and_only_this_runs_outputs(runs):
    (candidate, _), *_ = runs
    labels = [
        label("cand-run", "q001", "s", 0.0, annotator="x", at=1.0),
        label("cand-run", "q001", "s", 1.0, annotator="x", at=2.0),  # x changed their mind: the latest counts
        label("cand-run", "q001", "s", 0.0, annotator="y", at=1.0),
        label("base-run", "q002", "s", 1.0),  # another run's output
        label("cand-run", "q002", "other", 1.0),  # not a system of the run
        label("cand-run", "q003", "s", 1.0, rubric="faithful"),
    ]
    matched = matched_items(labels, candidate, "correct")
    assert {item: m.value for item, m in matched.items()} == {("s", "q001"): 0.5}


def test_the_scale_map_sends_the_metric_range_onto_the_rubric_best_to_best(runs):
    (candidate, _), *_ = runs
    assert judge_scale(candidate, "m", rubric_of("faithful")).of(1.0) == 5.0
    assert judge_scale(candidate, "m", rubric_of("faithful")).of(0.0) == 1.0
    assert judge_scale(candidate, "m", rubric_of("preference")).factor == 2.0


def test_labelled_and_sequential_do_not_go_together():
    from ragassay.config import EvaluationSection

    with pytest.raises(ValueError, match="labelled and sequential cannot go together"):
        EvaluationSection(labelled={"m": "correct"}, sequential={"alpha": 0.05})
    assert EvaluationSection(labelled={"m": "correct"}).labelled == {"m": "correct"}
