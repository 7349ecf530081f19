"""The match judge in both modes, its explanations, and the unscored verdict."""

from __future__ import annotations

import asyncio

import pydantic
import pytest

from ragassay.models import RAGOutput, Sample
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.match_judge import MatchJudge


def judge(answer: str, refs: list[str], **options):
    sample = Sample(question_id="q1", question="How much?", reference_answers=refs)
    return asyncio.run(MatchJudge(MatchJudge.Options(**options)).judge(sample, RAGOutput(answer=answer)))


def test_registered_through_entry_point():
    info = load_plugins().registry.get("judge", "match")
    assert info.cls is MatchJudge
    assert info.plugin == "match_judge"


def test_default_mode_is_contains():
    assert MatchJudge.Options().mode == "contains"
    assert judge("It costs 10 dollars.", ["10"]).judge_id == "match:contains"


def test_contains_correct_names_reference():
    result = judge("It costs 10 dollars.", ["twelve", "10"])
    assert (result.judge, result.verdict, result.score) == ("match", "correct", 1.0)
    assert result.explanation == "answer contains reference '10'"


def test_contains_whole_tokens_10_vs_100():
    result = judge("It costs 100 dollars.", ["10"])
    assert (result.verdict, result.score) == ("incorrect", 0.0)
    assert result.explanation.startswith("no reference found in answer")


def test_exact_mode():
    result = judge("The Ten!", ["ten"], mode="exact")
    assert (result.verdict, result.score, result.judge_id) == ("correct", 1.0, "match:exact")
    assert result.explanation == "answer equals reference 'ten'"
    result = judge("It costs 10 dollars.", ["10"], mode="exact")
    assert (result.verdict, result.score) == ("incorrect", 0.0)
    assert judge("100", ["10"], mode="exact").verdict == "incorrect"


def test_unscored_without_references():
    result = judge("anything", [])
    assert (result.verdict, result.score) == ("unscored", None)
    assert result.explanation == "sample has no reference_answers"
    result = judge("anything", ["The", ""], mode="exact")
    assert (result.verdict, result.score) == ("unscored", None)
    assert "empty after normalisation" in result.explanation


def test_agrees_with_metrics():
    from ragassay.plugins.lexical_metrics import ContainsAnswer, ExactMatch

    cases = [("It costs 10 dollars", ["10"]), ("100", ["10"]), ("the cat", ["Cat"]), ("no", ["yes", "maybe"])]
    for answer, refs in cases:
        sample = Sample(question_id="q", question="?", reference_answers=refs)
        out = RAGOutput(answer=answer)
        assert judge(answer, refs, mode="exact").score == ExactMatch().score(sample, out)
        assert judge(answer, refs, mode="contains").score == ContainsAnswer().score(sample, out)


def test_options_validated():
    with pytest.raises(pydantic.ValidationError):
        MatchJudge.Options(mode="fuzzy")
    with pytest.raises(pydantic.ValidationError):
        MatchJudge.Options(strict=True)
