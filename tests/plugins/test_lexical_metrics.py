"""Lexical metrics: hand-computed values, normalisation, multisets, max over references, unscored paths."""

from __future__ import annotations

import math
import random

import pydantic
import pytest

from ragassay.lexical import overlap, token_bag
from ragassay.models import RAGOutput, Sample, Unscored
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.lexical_metrics import (
    AnswerRelevanceTokenRecall,
    ContainsAnswer,
    ContextRelevanceTokenPrecision,
    ExactMatch,
    KPrecision,
    TokenF1,
    TokenRecall,
    contains_tokens,
)

ALL = (
    TokenRecall,
    TokenF1,
    KPrecision,
    ExactMatch,
    ContainsAnswer,
    AnswerRelevanceTokenRecall,
    ContextRelevanceTokenPrecision,
)
REFERENCE_METRICS = (TokenRecall, TokenF1, ExactMatch, ContainsAnswer)


def sample(*refs: str) -> Sample:
    return Sample(question_id="q1", question="Where did the cat sit?", reference_answers=list(refs))


def output(answer: str, *contexts: str) -> RAGOutput:
    return RAGOutput(answer=answer, contexts=list(contexts))


def score(metric_cls, s: Sample, o: RAGOutput, **options):
    metric = metric_cls(metric_cls.Options(**options))
    return metric.score(s, o)


# -- registration and documentation -----------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL)
def test_registered_through_entry_point(cls):
    info = load_plugins().registry.get("metric", cls.name)
    assert info.cls is cls
    assert info.plugin == "lexical_metrics"


@pytest.mark.parametrize("cls", ALL)
def test_documents_formula_and_source(cls):
    assert cls.formula and cls.source
    assert "Formula" in cls.__doc__ and "Source" in cls.__doc__


# -- the worked example of the docs ---------------------------------------------------------------


def test_cat_on_mat_example():
    # tokens: ['cat', 'sat', 'on', 'mat'] vs ['cat', 'on', 'mat']: common 3
    s, o = sample("a cat on a mat"), output("The cat sat on the mat")
    assert score(TokenRecall, s, o) == 1.0
    assert score(TokenF1, s, o) == pytest.approx(2 * 0.75 * 1.0 / 1.75)  # 0.857...
    assert score(ExactMatch, s, o) == 0.0
    assert score(ContainsAnswer, s, o) == 0.0  # 'cat on mat' is not contiguous in 'cat sat on mat'
    assert overlap(token_bag("cat sat on mat"), token_bag("cat on mat")).precision == 0.75


def test_normalisation_case_punctuation_articles():
    s = sample("The Eiffel Tower!")
    assert score(ExactMatch, s, output("eiffel tower")) == 1.0
    assert score(ExactMatch, s, output("An  Eiffel, tower.")) == 1.0
    assert score(TokenRecall, s, output("EIFFEL")) == 0.5
    assert score(ContainsAnswer, s, output("It is the Eiffel-Tower?")) == 0.0  # 'eiffeltower' is one token
    assert score(ContainsAnswer, s, output("It is the Eiffel tower, in Paris.")) == 1.0


# -- token recall / F1 ---------------------------------------------------------------------------


def test_recall_is_multiset():
    # reference needs 'very' twice; the answer has it once -> 2 of 3 reference tokens
    assert score(TokenRecall, sample("very very good"), output("very good")) == pytest.approx(2 / 3)
    # extra repeats in the answer do not help recall beyond the reference count
    assert score(TokenRecall, sample("very good"), output("very very very good")) == 1.0


def test_f1_is_multiset():
    # answer 'very very very good' vs ref 'very good': common 2, P = 2/4, R = 1 -> F1 = 2/3
    assert score(TokenF1, sample("very good"), output("very very very good")) == pytest.approx(2 / 3)


def test_max_over_references():
    s = sample("Paris", "the city of Paris in France")
    o = output("city of Paris")
    assert score(TokenRecall, s, o) == 1.0  # 'Paris' fully recalled
    # F1: vs 'paris' P=1/3 R=1 -> 0.5; vs 'city of paris in france' P=1 R=3/5 -> 0.75
    assert score(TokenF1, s, o) == pytest.approx(0.75)
    assert score(ExactMatch, sample("London", "City of Paris"), o) == 1.0
    assert score(ContainsAnswer, sample("London", "Paris"), o) == 1.0


def test_no_overlap_and_empty_answer_score_zero():
    s = sample("blue whale")
    for cls in REFERENCE_METRICS:
        assert score(cls, s, output("giraffe")) == 0.0
        assert score(cls, s, output("")) == 0.0


# -- K-precision ---------------------------------------------------------------------------------


def test_k_precision_joined_contexts():
    # answer tokens ['cat', 'sat', 'on', 'mat'] ; contexts joined contain cat, on, mat -> 3/4
    o = output("The cat sat on the mat", "A cat was on the roof.", "The mat was red.")
    assert score(KPrecision, sample(), o) == 0.75


def test_k_precision_each_context_is_unitxt_max():
    o = output("The cat sat on the mat", "A cat was on the roof.", "The mat was red.")
    # per context: {cat, on} = 2/4 ; {mat} = 1/4 -> max 0.5
    assert score(KPrecision, sample(), o, pool="each") == 0.5


def test_k_precision_is_multiset():
    # answer repeats 'yes' three times, the context holds it once -> 1/3
    assert score(KPrecision, sample(), output("yes yes yes", "yes")) == pytest.approx(1 / 3)


def test_k_precision_ignores_references():
    assert score(KPrecision, sample(), output("Paris", "Paris is in France")) == 1.0


def test_k_precision_options_forbid_unknown():
    with pytest.raises(pydantic.ValidationError):
        KPrecision.Options(pool="sum")
    with pytest.raises(pydantic.ValidationError):
        KPrecision.Options(other=1)


# -- contains answer -----------------------------------------------------------------------------


def test_contains_whole_tokens_only():
    assert score(ContainsAnswer, sample("10"), output("It costs 100 dollars")) == 0.0
    assert score(ContainsAnswer, sample("10"), output("It costs 10 dollars")) == 1.0
    assert score(ContainsAnswer, sample("New York"), output("in new york city")) == 1.0
    assert score(ContainsAnswer, sample("New York"), output("york new")) == 0.0


def test_contains_tokens_helper():
    assert contains_tokens(["a", "b", "c"], ["b", "c"])
    assert not contains_tokens(["a", "b", "c"], ["a", "c"])
    assert not contains_tokens(["a"], [])
    assert not contains_tokens([], ["a"])
    assert contains_tokens(["a", "a", "b"], ["a", "b"])  # a false start on the first token


def test_contains_tokens_agrees_with_a_plain_scan_on_random_token_lists():
    rng = random.Random(7)
    for _ in range(2000):
        hay = [rng.choice("ab") for _ in range(rng.randint(0, 8))]
        needle = [rng.choice("ab") for _ in range(rng.randint(1, 4))]
        plain = any(hay[i : i + len(needle)] == needle for i in range(len(hay) - len(needle) + 1))
        assert contains_tokens(hay, needle) is plain, (hay, needle)


def test_exact_match_requires_whole_answer():
    assert score(ExactMatch, sample("10"), output("10 dollars")) == 0.0


# -- unscored paths ------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", REFERENCE_METRICS)
def test_unscored_without_reference_answers(cls):
    result = score(cls, sample(), output("anything"))
    assert isinstance(result, Unscored)
    assert result.reason == "sample has no reference_answers"


@pytest.mark.parametrize("cls", REFERENCE_METRICS)
def test_unscored_when_every_reference_normalises_to_empty(cls):
    result = score(cls, sample("The.", "  ", "!?"), output("the"))
    assert isinstance(result, Unscored)
    assert "empty after normalisation" in result.reason


@pytest.mark.parametrize("cls", REFERENCE_METRICS)
def test_empty_references_are_skipped(cls):
    assert score(cls, sample("", "the", "Paris"), output("Paris")) == 1.0


def test_k_precision_unscored_without_contexts():
    result = score(KPrecision, sample("x"), output("Paris"))
    assert isinstance(result, Unscored)
    assert result.reason == "no retrieved contexts to be faithful to"


def test_k_precision_unscored_for_empty_answer():
    result = score(KPrecision, sample(), output("The...", "Paris is in France"))
    assert isinstance(result, Unscored)
    assert result.reason == "answer is empty after normalisation"


def test_k_precision_empty_contexts_text_scores_zero():
    assert score(KPrecision, sample(), output("Paris", "", "...")) == 0.0


@pytest.mark.parametrize("cls", ALL)
def test_values_are_finite_and_in_range(cls):
    s = sample("alpha beta", "gamma")
    for answer in ("", "alpha", "alpha alpha beta gamma delta", "!!!"):
        result = score(cls, s, output(answer, "alpha gamma"))
        if not isinstance(result, Unscored):
            assert not math.isnan(result) and 0.0 <= result <= 1.0


# -- Unitxt's published cases and the unitxt compatibility mode -------------------------------------------------


def test_published_token_overlap_case_through_the_metrics():
    s = sample("hello there general kenobi", "hello there!")
    assert score(TokenRecall, s, output("hello there general dude")) == 1.0
    assert score(TokenF1, s, output("hello there general dude")) == pytest.approx(0.75)


def test_published_k_precision_cases_per_context():
    assert score(KPrecision, sample(), output("B", "B C", "C"), pool="each") == 1.0
    assert score(KPrecision, sample(), output("B C D", "D"), pool="each") == pytest.approx(1 / 3)


def test_published_token_recall_case():
    assert score(TokenRecall, sample("B C", "C"), output("B")) == 0.5


@pytest.mark.parametrize("cls", (TokenRecall, TokenF1))
def test_unitxt_mode_scores_missing_references_zero(cls):
    assert isinstance(score(cls, sample(), output("cat")), Unscored)
    assert score(cls, sample(), output("cat"), compat="unitxt") == 0.0
    assert isinstance(score(cls, sample("The."), output("cat")), Unscored)
    assert score(cls, sample("The."), output("cat"), compat="unitxt") == 0.0


def test_unitxt_mode_counts_empty_references_as_zero_candidates():
    # ragassay ignores the empty reference; unitxt scores it 0 and takes the max: same value here
    assert score(TokenRecall, sample("", "cat mat"), output("cat"), compat="unitxt") == 0.5


def test_k_precision_unitxt_mode_pools_each_and_scores_zero():
    assert score(KPrecision, sample(), output("B C", "B", "C"), compat="unitxt") == 0.5
    assert score(KPrecision, sample(), output("B C", "B", "C")) == 1.0  # joined by default
    assert score(KPrecision, sample(), output("cat"), compat="unitxt") == 0.0
    assert score(KPrecision, sample(), output("the", "cat"), compat="unitxt") == 0.0
    with pytest.raises(pydantic.ValidationError, match="pool='each'"):
        KPrecision.Options(compat="unitxt", pool="joined")


def test_answer_relevance_is_question_token_recall():
    s = Sample(question_id="q", question="Where did the cat sit?", reference_answers=[])
    assert score(AnswerRelevanceTokenRecall, s, output("The cat sat on the mat.")) == pytest.approx(1 / 4)
    assert score(AnswerRelevanceTokenRecall, s, output("")) == 0.0
    empty = Sample(question_id="q", question="The?", reference_answers=[])
    assert isinstance(score(AnswerRelevanceTokenRecall, empty, output("cat")), Unscored)
    assert score(AnswerRelevanceTokenRecall, empty, output("cat"), compat="unitxt") == 0.0


def test_context_relevance_is_best_question_precision_over_contexts():
    s = Sample(question_id="q", question="Where did the cat sit?", reference_answers=[])
    value = score(ContextRelevanceTokenPrecision, s, output("a", "cat sit here", "where did it go"))
    assert value == pytest.approx(2 / 4)
    assert isinstance(score(ContextRelevanceTokenPrecision, s, output("a")), Unscored)
    assert score(ContextRelevanceTokenPrecision, s, output("a"), compat="unitxt") == 0.0
