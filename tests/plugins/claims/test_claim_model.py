"""ClaimChecks: RAGChecker's layout, alignment errors, and reading checks back from a metric's details."""

import re

import pytest
from pydantic import ValidationError

from ragassay.plugins.claims.model import ClaimChecks, checks_from_details, claim_text


def _checks(**overrides):
    fields = dict(
        response_claims=[["Nile", "is", "longest"], "The Nile flows north."],
        gt_answer_claims=[["Nile", "length", "6,650 km"]],
        answer2response=["Entailment", "Neutral"],
        response2answer=["Contradiction"],
        retrieved2response=[["Entailment", "Neutral"], ["Neutral", "Neutral"]],
        retrieved2answer=[["Neutral", "Entailment"]],
        chunk_ids=["d1", "d2"],
    )
    return ClaimChecks(**{**fields, **overrides})


def test_triplets_and_sentences_round_trip_through_json():
    checks = _checks()
    again = ClaimChecks.model_validate_json(checks.model_dump_json())
    assert again == checks
    assert claim_text(checks.response_claims[0]) == "Nile is longest"
    assert claim_text(checks.response_claims[1]) == "The Nile flows north."


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("answer2response", ["Entailment"], "answer2response has 1 entries but response_claims has 2"),
        ("response2answer", [], "response2answer has 0 entries but gt_answer_claims has 1"),
        ("retrieved2response", [["Neutral", "Neutral"]], "retrieved2response has 1 entries but response_claims has 2"),
        ("retrieved2answer", [["Neutral"]], "retrieved2answer[0] has 1 label(s) but there are 2 retrieved chunk(s)"),
    ],
)
def test_misaligned_lists_name_the_list_and_both_lengths(field, value, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        _checks(**{field: value})


def test_a_label_outside_the_three_is_refused():
    with pytest.raises(ValidationError, match="Entailment"):
        _checks(answer2response=["entailed", "Neutral"])


def test_unchecked_lists_are_none_and_need_no_alignment():
    checks = _checks(answer2response=None, retrieved2response=None, retrieved2answer=None, chunk_ids=[])
    assert checks.chunk_count == 0 and checks.answer2response is None


def test_checks_from_details_reads_what_a_metric_stores():
    checks = _checks()
    assert checks_from_details({"checks": checks.model_dump(mode="json"), "other": 1}) == checks
    assert checks_from_details({}) is None and checks_from_details(None) is None
    with pytest.raises(ValueError, match="must be a JSON object"):
        checks_from_details({"checks": [1, 2]})
    with pytest.raises(ValueError, match="answer2response has 1 entries"):
        checks_from_details({"checks": {**checks.model_dump(mode="json"), "answer2response": ["Neutral"]}})
