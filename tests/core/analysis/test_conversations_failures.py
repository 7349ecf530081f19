"""The first failing turn of each conversation, from turn_blame or from a metric and a threshold, and the
per-system summaries, on the hand-built conversational run."""

from __future__ import annotations

import pytest

from ragassay.analysis.conversations_failures import failure_rule, first_failures, summaries
from ragassay.errors import ConfigError
from ragassay.results import read_run

from conversation_runs import write_conversation_run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store, run_id = write_conversation_run(tmp_path_factory.mktemp("failures") / "results.db")
    try:
        yield read_run(store, run_id)
    finally:
        store.close()


def firsts(found):
    return {(f.system, f.conversation_id): (f.turn, f.blame, f.unscored) for f in found}


def test_the_first_turn_turn_blame_blames(run):
    rule = failure_rule(run)
    assert rule.metric == "turn_blame" and rule.threshold is None
    found = first_failures(run, rule)
    assert firsts(found) == {
        ("last", "c1"): (2, "retrieval", 0),
        ("last", "c2"): (2, "generation", 0),
        ("last", "c3"): (1, "retrieval", 0),
        ("rewrite", "c1"): (None, None, 0),
        ("rewrite", "c2"): (None, None, 0),
        ("rewrite", "c3"): (3, "context_loss", 1),  # turn 2 unscored: not a failure
    }
    c1 = next(f for f in found if (f.system, f.conversation_id) == ("last", "c1"))
    assert (c1.question_id, c1.reason, c1.turns, c1.value) == ("c1::2", "retrieval at turn 2", 3, 0.0)


def test_a_metric_and_a_threshold(run):
    found = first_failures(run, failure_rule(run, "recall", 0.75))
    assert firsts(found) == {
        ("last", "c1"): (2, None, 0),
        ("last", "c2"): (2, None, 0),
        ("last", "c3"): (1, None, 0),
        ("rewrite", "c1"): (3, None, 0),
        ("rewrite", "c2"): (None, None, 0),
        ("rewrite", "c3"): (None, None, 1),
    }
    assert next(f for f in found if f.system == "rewrite").reason == "recall = 0.5"


def test_per_system_summaries(run):
    found = summaries(first_failures(run, failure_rule(run)), run.systems)
    last, rewrite = found
    assert (last.conversations, last.turns, last.failed, last.unscored) == (3, 8, 3, 0)
    assert last.mean_first_turn == pytest.approx(5 / 3) and last.blames == {"retrieval": 2, "generation": 1}
    assert (rewrite.failed, rewrite.mean_first_turn, rewrite.blames, rewrite.unscored) == (
        1,
        3.0,
        {"context_loss": 1},
        1,
    )


@pytest.mark.parametrize(
    "metric, threshold, message",
    [
        (None, 0.5, "needs its metric"),
        ("recall", None, "not a turn_blame metric"),
        ("nope", 0.5, "'nope' is not in this run"),
        ("recall", float("nan"), "finite number"),
    ],
)
def test_bad_rules_say_what_to_do(run, metric, threshold, message):
    with pytest.raises(ConfigError, match=message):
        failure_rule(run, metric, threshold)
