"""Retrieve-or-not decision scoring on hand-made outcomes."""

from __future__ import annotations

import pytest

from ragassay.analysis.retrieval_decision import DecisionOutcome as O
from ragassay.analysis.retrieval_decision import score_decisions


def test_precision_recall_accuracy_tokens_and_quality_lost():
    # baseline (no retrieval) correct on a, b; wrong on c, d -> retrieval needed on c, d
    baseline = {"a": O(1, False, 5), "b": O(1, False, 5), "c": O(0, False, 5), "d": O(0, False, 5)}
    naive = {q: O(1, True, 100) for q in "abcd"}
    # agent retrieves on b (not needed), c (needed); skips a (fine) and d (needed: a miss, answered wrong)
    agent = {"a": O(1, False, 20), "b": O(1, True, 120), "c": O(1, True, 120), "d": O(0, False, 20)}
    report = score_decisions(agent, baseline, naive, ("agent", "none", "naive"))
    assert (report.samples, report.needed, report.retrieved, report.true_positive) == (4, 2, 2, 1)
    assert report.precision == 0.5 and report.recall == 0.5 and report.accuracy == 0.5
    assert report.naive_tokens == 400 and report.agent_tokens == 280 and report.tokens_saved == 120
    assert report.tokens_saved_share == pytest.approx(0.3)
    assert report.skipped == 2 and report.quality_lost_when_skipped == pytest.approx(0.5)  # (0 + 1) / 2


def test_samples_missing_anywhere_or_unlabelled_are_left_out():
    baseline = {"a": O(None, False, 1), "b": O(0, False, 1)}
    naive = {"a": O(1, True, 10), "b": O(1, True, 10), "c": O(1, True, 10)}
    agent = {"a": O(1, True, 10), "b": O(1, True, 10), "c": O(1, True, 10)}
    report = score_decisions(agent, baseline, naive, ("agent", "none", "naive"))
    assert report.samples == 1 and report.precision == 1.0 and report.recall == 1.0
    assert report.skipped == 0 and report.quality_lost_when_skipped is None


def test_no_retrievals_gives_undefined_precision():
    baseline = {"a": O(1, False, 1)}
    report = score_decisions({"a": O(1, False, 1)}, baseline, {"a": O(1, True, 9)}, ("x", "y", "z"))
    assert report.precision is None and report.recall is None and report.accuracy == 1.0
