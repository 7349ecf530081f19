"""``knowledge_retention`` through a run at a scripted loopback judge: the judge's facts and statuses become
1 - violated / facts, one call per turn with an earlier user turn; unchanged under 20% injected faults; an invalid
reply is unscored with the raw reply."""

from __future__ import annotations

import pytest

from conversation_judge import COPIES, ConversationJudge, scored
from servers.faults import FAULTS

pytest.importorskip("openai")

#: turn -> value, or the unscored reason's words
EXPECTED = {
    "nile::1": "no earlier user turn",
    "nile::2": 1.0,
    "nile::3": 0.5,
    "moon::1": "no earlier user turn",
    "moon::2": "the user gave no fact",
}
ASKED = 3  # per copy: the turns with an earlier user turn


def check(records) -> None:
    for copy in range(COPIES):
        for turn, expected in EXPECTED.items():
            cid, number = turn.split("::")
            record = records[(f"{cid}-{copy}::{number}", "knowledge_retention")]
            if isinstance(expected, str):
                assert record.value is None and expected in record.unscored_reason
            else:
                assert record.value == expected
    facts = records[("nile-0::3", "knowledge_retention")].details["facts"]
    assert [(f["fact"], f["turn"], f["status"]) for f in facts] == [
        ("The user lives in Cairo.", 1, "kept"),
        ("The user plans a boat trip on the Nile.", 1, "asked_again"),
    ]
    assert records[("nile-0::3", "knowledge_retention")].details["counts"] == {
        "kept": 1, "asked_again": 1, "contradicted": 0
    }  # fmt: skip


def test_the_judges_facts_give_the_retention(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records, calls = scored(tmp_path, ConversationJudge(), ["knowledge_retention"])
    check(records)
    assert calls == COPIES * ASKED  # no call for a turn without an earlier user turn


def test_injected_faults_change_no_value(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    judge = ConversationJudge(fault_every=5)  # 15 questions: 3 faults (an invalid reply: the other judges' tests)
    records, calls = scored(tmp_path, judge, ["knowledge_retention"])
    check(records)
    assert set(judge.faulted.values()) == set(FAULTS[:3])
    assert len(judge.faulted) == COPIES * ASKED // 5 and calls > COPIES * ASKED


def test_an_invalid_reply_is_unscored_with_the_raw_reply(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records, _ = scored(tmp_path, ConversationJudge(), ["knowledge_retention"], broken=True)
    record = records[("nile-0::2", "knowledge_retention")]
    assert record.value is None and "retention judge reply not usable" in record.unscored_reason
    assert "forgotten" in record.details["raw"]
