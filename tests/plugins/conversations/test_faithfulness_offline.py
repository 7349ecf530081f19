"""The offline turn support rates on hand-built turns (exact values and attributions) and through a run with no
model at all."""

from __future__ import annotations

import asyncio

import pytest

import ragassay
from ragassay import RAGOutput, Sample, Turn
from ragassay.plugins.conversations.faithfulness_offline import OFFLINE_METRICS, attribute

from conversation_judge import COPIES, project_config, write_conversations

CONTEXT, HISTORY, NONE = OFFLINE_METRICS
HISTORY_TURNS = [
    Turn(speaker="user", text="I plan a boat trip on the Nile."),
    Turn(speaker="agent", text="The Nile is about 6,650 km long."),
    Turn(speaker="user", text="Where does it end?"),
    Turn(speaker="agent", text="The Nile ends in a delta near Alexandria."),
]


def turn(**fields) -> Sample:
    return Sample(
        question_id="c::3", question="And then?", conversation_id="c", turn=3, history=HISTORY_TURNS, **fields
    )


def rates(answer: str, contexts: list[str], sample: Sample | None = None, **options):
    sample, output = sample or turn(), RAGOutput(answer=answer, contexts=contexts)
    return [asyncio.run(cls(cls.Options(**options)).ascore(sample, output)) for cls in OFFLINE_METRICS]


def test_a_claim_only_an_earlier_turn_supports_is_history_not_none():
    row = attribute("The Nile is about 6,650 km long.", ["Boats sail on the Nile."], HISTORY_TURNS, 0.7)
    assert (row["support"], row["turn"], row["context"]) == ("history", 1, None)
    assert "agent said at turn 1" in row["explanation"]


def test_three_claims_three_classes_exact_rates():
    answer = "The Nile ends in a delta near Alexandria. The Nile is about 6,650 km long. Purple hippos sing there."
    context, history, none = rates(answer, ["Sails are white.", "The Nile ends in a delta near Alexandria."])
    assert [context.value, history.value, none.value] == pytest.approx([1 / 3, 1 / 3, 1 / 3])
    claims = context.details["claims"]
    assert [(c["support"], c["turn"], c["context"]) for c in claims] == [
        ("context", None, 1),  # the context beats the earlier turn that says the same (turn 2)
        ("history", 1, None),
        ("none", None, None),
    ]
    assert context.details["counts"] == {"context": 1, "history": 1, "none": 1}
    assert "weak" in context.details["offline"] and "weak" in CONTEXT.__doc__


def test_the_threshold_decides_and_ties_go_to_the_first_context_and_the_latest_turn():
    # content words: nile, delta, alexandria; 2 of 3 (0.67) in each context
    claim = "The Nile delta is at Alexandria."
    assert attribute(claim, ["Nile delta.", "Nile of Alexandria."], [], 0.7)["support"] == "none"
    assert attribute(claim, ["Nile delta.", "Nile of Alexandria."], [], 0.6)["context"] == 0
    said = [Turn(speaker="user", text="The Nile delta?"), Turn(speaker="agent", text="The Nile delta.")]
    said += [Turn(speaker="user", text="And the delta of the Nile?")]
    row = attribute(claim, [], said, 0.6)
    assert (row["support"], row["turn"]) == ("history", 2)  # three utterances tie at 0.67: the latest, turn 2
    context, history, none = rates("Nile delta Alexandria.", ["Nile delta."], threshold=0.6)
    assert (context.value, none.value) == (1.0, 0.0)


def test_questions_are_not_claims_and_no_claim_is_unscored():
    context, history, none = rates("Which boat trip do you mean?", ["Boat trips on the Nile."])
    assert all(r.reason.startswith("the answer makes no claim") for r in (context, history, none))
    single = Sample(question_id="q", question="Where does the Nile end?")
    found = rates("The Nile ends in the sea.", ["The Nile ends in the sea."], single)
    assert all("not a conversation turn" in r.reason for r in found)


def test_an_offline_run_scores_the_conversations_with_no_model(tmp_path):
    metrics = [cls.name for cls in OFFLINE_METRICS]
    run = ragassay.run(write_conversations(tmp_path, project_config("http://127.0.0.1:9", metrics)))
    records = {(r.question_id, r.label): r for r in run.data().scores}
    expected = {  # by hand: see conversation_judge's turns
        "nile::1": (1.0, 0.0, 0.0),
        "nile::2": (1 / 3, 1 / 3, 1 / 3),  # the length repeats the turn-1 answer: history
        "nile::3": None,  # a question only
        "moon::1": (1.0, 0.0, 0.0),
        "moon::2": (0.0, 0.0, 1.0),  # "Mining Corp owns the mines": 2 of 5 content words in the context
    }
    for copy in range(COPIES):
        for key, values in expected.items():
            cid, number = key.split("::")
            found = [records[(f"{cid}-{copy}::{number}", name)] for name in metrics]
            if values is None:
                assert all(r.value is None for r in found)
            else:
                assert [r.value for r in found] == pytest.approx(list(values), abs=1e-12)
            assert all(r.usage.calls == 0 for r in found)
