"""One conversation as plain data (what ``show --conversation`` and serve's page render), and the listing, from a
hand-built conversational run in a real SQLite store."""

from __future__ import annotations

import pytest

from ragassay.analysis.conversations_failures import failure_rule
from ragassay.errors import ConfigError
from ragassay.present.conversation_view import conversation_detail, conversation_listing
from ragassay.results import read_payloads, read_run

from conversation_runs import CLAIMS, RUN_ID, write_conversation_run


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    store, run_id = write_conversation_run(tmp_path_factory.mktemp("conversation-view") / "results.db")
    run = read_run(store, run_id)
    payloads = read_payloads(store, run_id, ["c1::1", "c1::2", "c1::3"])
    store.close()
    return run, payloads


def test_the_turns_in_order_with_each_systems_part(stored):
    run, payloads = stored
    detail = conversation_detail(run, "c1", payloads, rule=failure_rule(run))
    assert detail["run"] == RUN_ID and detail["systems"] == ["last", "rewrite"]
    assert [t["turn"] for t in detail["turns"]] == [1, 2, 3]
    assert detail["opening"] == [{"speaker": "user", "text": "hello"}, {"speaker": "agent", "text": "hi!"}]
    last, rewrite = detail["turns"][1]["systems"]
    assert last["query"] is None and rewrite["query"].startswith("rewritten: ")
    assert [(c["id"], c["reference"]) for c in last["contexts"]] == [("doc-a#0", False), ("doc-b#3", True)]
    assert last["claims"]["metric"] == "support"
    assert [(c["text"], c["support"], c["tone"]) for c in last["claims"]["claims"]] == [
        (CLAIMS[0]["text"], "history", "warn"),
        (CLAIMS[1]["text"], "context", "good"),
        (CLAIMS[2]["text"], "none", "bad"),
    ]
    assert last["blame"] == {"metric": "turn_blame", "blame": "retrieval", "reason": "retrieval at turn 2"}
    assert last["first_failure"] and not rewrite["first_failure"] and rewrite["claims"] is None
    assert detail["first_failures"] == {
        "last": {"turn": 2, "question_id": "c1::2", "blame": "retrieval", "reason": "retrieval at turn 2"},
        "rewrite": None,
    }
    assert {m["name"]: m["value"] for m in last["metrics"]}["recall"] == 0.5


def test_without_a_rule_no_failure_is_named(stored):
    run, payloads = stored
    detail = conversation_detail(run, "c1", payloads, ["rewrite"])
    assert detail["rule"] is None and detail["first_failures"] == {}
    assert [e["system"] for t in detail["turns"] for e in t["systems"]] == ["rewrite"] * 3


def test_the_listing_has_a_row_per_conversation_and_system(stored):
    run, _ = stored
    rows = conversation_listing(run, failure_rule(run))
    assert [(r["conversation"], r["system"], r["turns"], r["first_failure"], r["blame"]) for r in rows] == [
        ("c1", "last", 3, 2, "retrieval"),
        ("c1", "rewrite", 3, None, ""),
        ("c2", "last", 2, 2, "generation"),
        ("c2", "rewrite", 2, None, ""),
        ("c3", "last", 3, 1, "retrieval"),
        ("c3", "rewrite", 3, 3, "context_loss"),
    ]
    assert rows[2]["answerability"] == "answerable, underspecified"


@pytest.mark.parametrize(
    "conversation, systems, message",
    [("zz", None, "has no conversation 'zz'; it has: c1, c2, c3"), ("c1", ["x"], "system 'x' is not in this run")],
)
def test_unknown_names_say_what_there_is(stored, conversation, systems, message):
    run, payloads = stored
    with pytest.raises(ConfigError, match=message):
        conversation_detail(run, conversation, payloads, systems)
