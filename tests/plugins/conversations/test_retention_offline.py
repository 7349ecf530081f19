"""The offline knowledge retention: user statements as facts, questions of the reply matched by word overlap,
exact values on hand-built turns, and a run with no model."""

from __future__ import annotations

import asyncio

import pytest

import ragassay
from ragassay import RAGOutput, Sample, Turn
from ragassay.plugins.conversations.retention_offline import KnowledgeRetentionOffline, user_facts

from conversation_judge import COPIES, project_config, write_conversations

HISTORY = [
    Turn(speaker="user", text="I live in Lyon. My budget is 500 euros. Which hotels are near the station?"),
    Turn(speaker="agent", text="The Hotel Rhone is near the station. I live nowhere."),
    Turn(speaker="user", text="I travel with two children."),
]


def sample(history=HISTORY) -> Sample:
    return Sample(question_id="c::3", question="Which one is cheapest?", conversation_id="c", turn=3, history=history)


def score(reply: str, history=HISTORY, **options):
    metric = KnowledgeRetentionOffline(KnowledgeRetentionOffline.Options(**options))
    return asyncio.run(metric.ascore(sample(history), RAGOutput(answer=reply)))


def test_the_facts_are_the_users_statements_with_their_turns():
    assert user_facts(sample()) == [
        ("I live in Lyon.", 1),
        ("My budget is 500 euros.", 1),
        ("I travel with two children.", 2),
    ]


def test_a_fact_asked_again_costs_its_share():
    result = score("Where do you live? And what is your budget?")
    assert result.value == pytest.approx(1 - 2 / 3)
    assert [f["status"] for f in result.details["facts"]] == ["asked_again", "asked_again", "kept"]
    assert result.details["counts"] == {"kept": 1, "asked_again": 2, "contradicted": 0}
    assert "weak" in result.details["offline"]
    assert score("The Ibis is cheapest for a family in Lyon.").value == 1.0  # no question: all kept
    assert score("The Ibis, since you live in Paris.").value == 1.0  # a contradiction is never seen (weak)


def test_the_threshold_decides():
    # "How many children travel?": content words children, many, travel -> 2 of 3 in the fact
    assert score("How many children travel?").value == 1.0
    assert score("How many children travel?", threshold=0.6).value == pytest.approx(2 / 3)


def test_no_earlier_user_turn_or_no_fact_is_unscored():
    assert "no earlier user turn" in score("Hello.", history=[Turn(speaker="agent", text="Hi!")]).reason
    assert "gave no fact" in score("Hello.", history=[Turn(speaker="user", text="Which hotel?")]).reason


def test_an_offline_run_scores_the_retention_with_no_model(tmp_path):
    config = project_config("http://127.0.0.1:9", ["knowledge_retention_offline"])
    run = ragassay.run(write_conversations(tmp_path, config))
    records = {r.question_id: r for r in run.data().scores}
    # by hand: the one fact is "Case k: I live in Cairo and I plan a boat trip on the Nile."; nile::3 asks
    # "Which boat trip do you mean?": boat, trip of boat, trip, mean = 0.67 < 0.7, so kept (the judge says asked)
    for copy in range(COPIES):
        assert records[f"nile-{copy}::2"].value == 1.0
        assert records[f"nile-{copy}::3"].value == 1.0
        assert "no earlier user turn" in records[f"nile-{copy}::1"].unscored_reason
        assert "gave no fact" in records[f"moon-{copy}::2"].unscored_reason
    assert records["nile-0::3"].details["facts"][0]["turn"] == 1
