"""Answerability behaviour on the hand-built conversational run: confusion, per-class recall and balanced accuracy
(exact), intervals that resample conversations (checked against a plain loop over the same draws)."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.analysis.bootstrap import generator
from ragassay.analysis.conversations_answerability import answerability, behaviour_column
from ragassay.errors import ConfigError
from ragassay.results import read_run

from conversation_runs import write_conversation_run
from written_runs import write_run


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    store, run_id = write_conversation_run(tmp_path_factory.mktemp("answerability") / "results.db")
    try:
        run = read_run(store, run_id)
    finally:
        store.close()
    return run, {s.system: s for s in answerability(run, seed=5, n_resamples=300)}


def recalls(score):
    return {r.label: r.recall.value for r in score.recalls}


def test_the_behaviour_metric_is_found_by_its_component_name(scores):
    run, found = scores
    assert behaviour_column(run) == "behaviour" and found["last"].metric == "behaviour"


def test_confusion_recall_and_balanced_accuracy_exact(scores):
    _, found = scores
    last = found["last"]
    assert last.labels == ["answerable", "unanswerable", "underspecified"]
    assert last.behaviours == ["answer", "refuse"]
    assert last.counts == {
        "answerable": {"answer": 4, "refuse": 1},
        "unanswerable": {"answer": 1, "refuse": 1},
        "underspecified": {"answer": 1, "refuse": 0},
    }
    assert recalls(last) == pytest.approx({"answerable": 0.8, "unanswerable": 0.5, "underspecified": 0.0})
    assert last.balanced_accuracy.value == pytest.approx(1.3 / 3)
    assert (last.balanced_accuracy.n_turns, last.balanced_accuracy.n_conversations) == (8, 3)
    rewrite = found["rewrite"]
    assert rewrite.unscored == 1 and rewrite.behaviours == ["answer", "refuse", "clarify"]
    assert recalls(rewrite) == pytest.approx({"answerable": 1.0, "unanswerable": 0.5, "underspecified": 1.0})
    assert rewrite.balanced_accuracy.value == pytest.approx(2.5 / 3)


def test_a_class_seen_in_one_conversation_has_no_interval(scores):
    _, found = scores
    [lone] = [r.recall for r in found["last"].recalls if r.label == "underspecified"]
    assert lone.ci_low is None and lone.reason == "fewer than 2 conversations (1)"


def test_the_balanced_accuracy_interval_resamples_conversations(scores):
    _, found = scores
    # per conversation (c1, c2, c3) of "last": hits and turns of (answerable, unanswerable, underspecified)
    hits = np.array([[2, 0, 0], [1, 0, 0], [1, 1, 0]], dtype=float)
    turns = np.array([[2, 1, 0], [1, 0, 1], [2, 1, 0]], dtype=float)
    theta = []
    for row in generator(5).integers(0, 3, (300, 3)):
        h, t = hits[row].sum(0), turns[row].sum(0)
        theta.append(np.mean([h[j] / t[j] for j in range(3) if t[j] > 0]))
    balanced = found["last"].balanced_accuracy
    assert (balanced.ci_low, balanced.ci_high) == pytest.approx(tuple(np.quantile(theta, [0.025, 0.975])))


def test_a_run_without_the_metric_has_no_scores(tmp_path):
    store, run_id = write_run(tmp_path / "plain.db", {"a": [{"metrics": {"m": 1.0}}]})
    try:
        plain = read_run(store, run_id)
    finally:
        store.close()
    assert answerability(plain) == []
    with pytest.raises(ConfigError, match="'x' is not in this run"):
        answerability(plain, "x")
