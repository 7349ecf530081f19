"""The offline answerability heuristic: its phrase rules on hand-built replies, the label mapping, the unlabelled
turn, and a run with no model."""

from __future__ import annotations

import asyncio

import pytest

import ragassay
from ragassay import RAGOutput, Sample
from ragassay.plugins.conversations.answerability_base import EXPECTED
from ragassay.plugins.conversations.answerability_offline import AnswerabilityBehaviourOffline, behaviour_of

from conversation_judge import COPIES, project_config, write_conversations


@pytest.mark.parametrize(
    ("reply", "behaviour"),
    [
        ("The Nile flows into the Mediterranean Sea.", "answer"),
        ("I don't know who owns the mines.", "refuse"),
        ("I’m sorry, the documents do not mention the owner.", "refuse"),  # curly apostrophe, "do not mention"
        ("", "refuse"),
        ("Could you clarify which trip?", "clarify"),
        ("There are two trips. Which one would you like?", "clarify"),  # a question put to the user
        ("Is it not beautiful?", "answer"),  # a question, but not to the user
        ("The owner is not mentioned. The mines opened in 2031. They employ 40 people.", "answer"),  # 1 of 3
        ("The owner is not mentioned. I could not find the date either. The mines are big.", "refuse"),  # 2 of 3
    ],
)
def test_the_phrase_rules(reply, behaviour):
    assert behaviour_of(reply)[0] == behaviour


def score(reply: str, label: str | None):
    sample = Sample(question_id="c::2", question="Who owns it?", conversation_id="c", turn=2, answerability=label)
    return asyncio.run(AnswerabilityBehaviourOffline().ascore(sample, RAGOutput(answer=reply)))


def test_each_label_expects_its_behaviour():
    assert EXPECTED == {
        "answerable": "answer",
        "unanswerable": "refuse",
        "underspecified": "clarify",
        "partial": "answer",
    }
    assert score("It is owned by Mining Corp.", "partial").value == 1.0
    assert score("It is owned by Mining Corp.", "unanswerable").value == 0.0
    refused = score("I do not know.", "unanswerable")
    assert refused.value == 1.0
    assert {k: refused.details[k] for k in ("behaviour", "label", "expected")} == {
        "behaviour": "refuse", "label": "unanswerable", "expected": "refuse"
    }  # fmt: skip
    assert "i do not know" in refused.details["explanation"] and "weak" in refused.details["offline"]
    assert score("Do you mean the old mine?", "answerable").value == 0.0


def test_a_turn_without_a_label_is_unscored():
    assert "no answerability label" in score("I do not know.", None).reason


def test_an_offline_run_scores_the_behaviour_with_no_model(tmp_path):
    config = project_config("http://127.0.0.1:9", ["answerability_behaviour_offline"])
    run = ragassay.run(write_conversations(tmp_path, config))
    records = {r.question_id: r for r in run.data().scores}
    # by hand: answers everywhere but nile::3 ("do you mean": clarify); moon::2 answers an unanswerable turn
    expected = {"nile::1": 1.0, "nile::2": 1.0, "nile::3": 1.0, "moon::1": 1.0, "moon::2": 0.0}
    for copy in range(COPIES):
        for key, value in expected.items():
            cid, number = key.split("::")
            assert records[f"{cid}-{copy}::{number}"].value == value
    assert records["nile-0::3"].details["behaviour"] == "clarify"
