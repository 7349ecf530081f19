"""The turn support rates through a run at a scripted loopback judge: the judge's claims and supports become the
three rates and the stored claims (0-based contexts, turns as given), one call per output shared by the three;
20% injected faults change nothing; a reply that stays invalid is unscored with the raw reply."""

from __future__ import annotations

import pytest

from conversation_judge import COPIES, ConversationJudge, scored
from servers.faults import FAULTS

pytest.importorskip("openai")

RATES = ["turn_context_support", "turn_history_support", "turn_unsupported"]
#: (context, history, none) rates of each turn from the script; None: the answer makes no claim
EXPECTED = {
    "nile::1": (1.0, 0.0, 0.0),
    "nile::2": (1 / 3, 1 / 3, 1 / 3),
    "nile::3": None,
    "moon::1": (1.0, 0.0, 0.0),
    "moon::2": (0.0, 0.0, 1.0),
}


def check(records) -> None:
    for copy in range(COPIES):
        for turn, rates in EXPECTED.items():
            cid, number = turn.split("::")
            qid = f"{cid}-{copy}::{number}"
            found = [records[(qid, name)] for name in RATES]
            if rates is None:
                assert all(r.value is None and "makes no claim" in r.unscored_reason for r in found)
                continue
            assert [r.value for r in found] == pytest.approx(list(rates), abs=1e-12), qid
            owners = [r for r in found if "claims_with" not in r.details]
            assert len(owners) == 1 and owners[0].usage.calls >= 1  # one call, counted on one metric
            assert all(r.details["claims_with"] == owners[0].label for r in found if r is not owners[0])
            assert all(r.usage.calls == 0 for r in found if r is not owners[0])
            assert all(r.details["claims"] == found[0].details["claims"] for r in found)


def test_the_judges_supports_become_three_rates_and_the_stored_claims(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records, calls = scored(tmp_path, ConversationJudge(), RATES)
    check(records)
    assert calls == COPIES * len(EXPECTED)  # one support call per output, not three
    claims = records[("nile-0::2", "turn_history_support")].details["claims"]
    assert claims == [
        {"text": "The Nile flows into the Mediterranean Sea.", "support": "context", "turn": None, "context": 1,
         "explanation": "Compared with the turn."},
        {"text": "The Nile is about 6,650 km long.", "support": "history", "turn": 1, "context": None,
         "explanation": "Compared with the turn."},
        {"text": "Purple hippos live in the Nile delta.", "support": "none", "turn": None, "context": None,
         "explanation": "Compared with the turn."},
    ]  # fmt: skip
    assert records[("nile-0::2", "turn_context_support")].details["counts"] == {"context": 1, "history": 1, "none": 1}


def test_injected_faults_change_no_value(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    judge = ConversationJudge(fault_every=5)
    records, calls = scored(tmp_path, judge, RATES)
    check(records)
    assert set(judge.faulted.values()) == set(FAULTS)
    assert len(judge.faulted) == len(judge.seen) // 5 and len(judge.seen) == COPIES * len(EXPECTED)
    assert calls > COPIES * len(EXPECTED)  # the faulted questions were asked again


def test_a_reply_that_stays_invalid_is_unscored_with_the_raw_reply(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records, _ = scored(tmp_path, ConversationJudge(), RATES, broken=True)
    for name in RATES:
        record = records[("nile-0::2", name)]
        assert record.value is None
        assert "support judge reply not usable" in record.unscored_reason
        assert "needs the number of an earlier turn" in record.unscored_reason
    owner = next(records[("nile-0::2", n)] for n in RATES if "claims_with" not in records[("nile-0::2", n)].details)
    assert '"turn": 99' in owner.details["raw"]
    assert records[("nile-1::2", "turn_context_support")].value == pytest.approx(1 / 3)  # the others are scored


def test_all_turn_judges_in_one_run_give_the_same_values_with_faults(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    metrics = [*RATES, "answerability_behaviour", "knowledge_retention"]
    clean, _ = scored(tmp_path / "clean", ConversationJudge(), metrics)
    judge = ConversationJudge(fault_every=5)
    faulted, _ = scored(tmp_path / "faulted", judge, metrics)
    assert set(judge.faulted.values()) == set(FAULTS) and len(judge.faulted) == len(judge.seen) // 5
    assert {key: r.value for key, r in faulted.items()} == {key: r.value for key, r in clean.items()}
    assert sum(r.value is not None for r in clean.values()) == COPIES * (3 * 4 + 5 + 2)
