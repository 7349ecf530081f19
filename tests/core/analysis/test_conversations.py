"""Quality by turn depth and by answerability class on a hand-built conversational run in a real SQLite store:
exact means and counts, intervals that resample whole conversations (checked against a plain loop over the same
draws), determinism."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.analysis.clustered import cluster_mean_ci, clusters_of
from ragassay.analysis.conversations import (
    by_answerability,
    by_depth,
    cluster_mean,
    conversation_turns,
    is_turn_run,
)
from ragassay.errors import ConfigError
from ragassay.results import read_run

from conversation_runs import write_conversation_run
from written_runs import write_run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store, run_id = write_conversation_run(tmp_path_factory.mktemp("conversations") / "results.db")
    try:
        yield read_run(store, run_id)
    finally:
        store.close()


def cell(result, system, metric, group):
    [row] = [r for r in result.rows if (r.system, r.metric, r.group) == (system, metric, group)]
    return row.stat


def test_the_turns_of_each_conversation_in_turn_order(run):
    turns = conversation_turns(run)
    assert {cid: [run.question_ids[i] for i in p] for cid, p in turns.items()} == {
        "c1": ["c1::1", "c1::2", "c1::3"],
        "c2": ["c2::1", "c2::2"],
        "c3": ["c3::1", "c3::2", "c3::3"],
    }
    assert is_turn_run(run)


def test_quality_by_turn_depth_exact(run):
    result = by_depth(run, ["recall"], seed=3)
    assert result.groups == ["1", "2", "3"] and result.conversations == 3 and result.turns == 8
    first, second, third = (cell(result, "last", "recall", g) for g in ("1", "2", "3"))
    assert first.value == pytest.approx(2.5 / 3) and (first.n_turns, first.n_scored, first.n_conversations) == (3, 3, 3)
    assert second.value == pytest.approx(0.5 / 3)
    assert third.value == pytest.approx(0.5) and (third.n_turns, third.n_conversations) == (2, 2)  # c2 has 2 turns
    unscored = cell(result, "rewrite", "recall", "2")
    assert unscored.value == 1.0 and (unscored.n_turns, unscored.n_scored, unscored.n_conversations) == (3, 2, 2)
    assert (unscored.ci_low, unscored.ci_high) == (None, None)
    assert unscored.reason == "every scored instance has the same value"  # as every mean of ragassay says
    assert 0.5 <= first.ci_low <= first.value <= first.ci_high <= 1.0


def test_the_single_question_is_left_out_of_the_depths(run):
    result = by_depth(run, ["recall"])
    assert sum(cell(result, "last", "recall", g).n_turns for g in result.groups) == 8  # not the ninth sample


def test_quality_by_answerability_exact(run):
    result = by_answerability(run, ["recall"])
    assert result.groups == ["answerable", "unanswerable", "underspecified"]
    answerable = cell(result, "last", "recall", "answerable")
    assert answerable.value == pytest.approx(0.8) and (answerable.n_turns, answerable.n_conversations) == (5, 3)
    assert cell(result, "last", "recall", "unanswerable").value == 0.0
    lone = cell(result, "last", "recall", "underspecified")
    assert lone.value == 0.0 and lone.ci_low is None and lone.reason == "fewer than 2 instances (1)"


def test_the_interval_is_the_cluster_bootstrap_of_every_turn_level_mean():
    """One interval for every turn-level mean: the one of ragassay.analysis.clustered (tested there by hand)."""
    values = np.array([1.0, 1.0, 1.0, 0.0, np.nan, 0.5, 0.25])
    clusters = np.array(["a", "a", "a", "b", "b", "c", "c"])
    found = cluster_mean(values, clusters, n_resamples=200, seed=7)
    scored = ~np.isnan(values)
    (expected,) = cluster_mean_ci(values[scored], clusters_of(list(clusters[scored])), n_resamples=200, seed=7)
    assert found.value == pytest.approx(3.75 / 6) == pytest.approx(expected.mean)
    assert (found.ci_low, found.ci_high) == (expected.ci_low, expected.ci_high) and found.ci_low is not None
    assert (found.n_turns, found.n_scored, found.n_conversations) == (7, 6, 3)


def test_turns_of_one_conversation_move_together():
    """Correlated turns: one conversation all right, one all wrong. Resampling conversations gives a wide
    interval; the same values as independent samples would give a narrow one."""
    values = np.array([1.0] * 10 + [0.0] * 10)
    clustered = cluster_mean(values, np.array(["a"] * 10 + ["b"] * 10), n_resamples=500, seed=1)
    independent = cluster_mean(values, np.arange(20), n_resamples=500, seed=1)
    assert (clustered.ci_low, clustered.ci_high) == (0.0, 1.0)
    assert independent.ci_high - independent.ci_low < 0.5


def test_the_same_seed_gives_the_same_intervals(run):
    first, again = by_depth(run, seed=11), by_depth(run, seed=11)
    assert first.rows == again.rows
    values, clusters = np.linspace(0.0, 1.0, 40) ** 2, np.arange(40) // 4  # ten conversations of four turns
    seven, eight = (cluster_mean(values, clusters, seed=s) for s in (7, 8))
    assert cluster_mean(values, clusters, seed=7) == seven and seven.ci_low != eight.ci_low


def test_no_interval_without_a_scored_turn():
    found = cluster_mean(np.array([np.nan, np.nan]), np.array([0, 1]))
    assert found.value is None and found.reason == "no scored turn"


def test_an_unknown_metric_is_a_config_error(run):
    with pytest.raises(ConfigError, match="'nope' is not in this run"):
        by_depth(run, ["nope"])


def test_a_run_without_turns(tmp_path):
    store, run_id = write_run(tmp_path / "plain.db", {"a": [{"metrics": {"m": 1.0}}, {"metrics": {"m": 0.0}}]})
    try:
        plain = read_run(store, run_id)
    finally:
        store.close()
    assert not is_turn_run(plain) and conversation_turns(plain) == {}
    assert by_depth(plain).groups == [] and by_depth(plain).rows == []
