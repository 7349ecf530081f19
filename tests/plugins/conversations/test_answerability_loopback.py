"""``answerability_behaviour`` through a run at a scripted loopback judge: the judge's behaviour scored against
each turn's label, one call per labelled turn, unchanged under 20% injected faults; an invalid reply is unscored
with the raw reply."""

from __future__ import annotations

import pytest

from conversation_judge import COPIES, ConversationJudge, scored
from servers.faults import FAULTS

pytest.importorskip("openai")

#: turn -> (behaviour the script gives, the turn's label, expected behaviour, value)
EXPECTED = {
    "nile::1": ("answer", "answerable", "answer", 1.0),
    "nile::2": ("answer", "answerable", "answer", 1.0),
    "nile::3": ("clarify", "underspecified", "clarify", 1.0),
    "moon::1": ("answer", "answerable", "answer", 1.0),
    "moon::2": ("answer", "unanswerable", "refuse", 0.0),
}


def check(records) -> None:
    for copy in range(COPIES):
        for turn, (behaviour, label, expected, value) in EXPECTED.items():
            cid, number = turn.split("::")
            record = records[(f"{cid}-{copy}::{number}", "answerability_behaviour")]
            assert record.value == value
            assert {k: record.details[k] for k in ("behaviour", "label", "expected")} == {
                "behaviour": behaviour, "label": label, "expected": expected
            }  # fmt: skip
            assert record.details["explanation"] == "What the reply does."
            assert record.usage.calls >= 1


def test_the_judges_behaviour_is_scored_against_the_label(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records, calls = scored(tmp_path, ConversationJudge(), ["answerability_behaviour"])
    check(records)
    assert calls == COPIES * len(EXPECTED)


def test_injected_faults_change_no_value(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    judge = ConversationJudge(fault_every=5)
    records, calls = scored(tmp_path, judge, ["answerability_behaviour"])
    check(records)
    assert set(judge.faulted.values()) == set(FAULTS)
    assert len(judge.faulted) == COPIES * len(EXPECTED) // 5 and calls > COPIES * len(EXPECTED)


def test_an_invalid_reply_is_unscored_with_the_raw_reply(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records, _ = scored(tmp_path, ConversationJudge(), ["answerability_behaviour"], broken=True)
    record = records[("nile-0::2", "answerability_behaviour")]
    assert record.value is None and "behaviour judge reply not usable" in record.unscored_reason
    assert "answered politely" in record.details["raw"]
