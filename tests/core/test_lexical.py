"""ragassay.lexical: Unitxt's published cases (seeds/004 issue text), tokenisation parity, MAP vs trec_eval."""

from __future__ import annotations

import pytest

from ragassay.lexical import (
    average_precision,
    best_overlap,
    overlap,
    plain_tokens,
    reciprocal_rank,
    relevance_flags,
    token_bag,
)
from ragassay.text import answer_tokens


def test_token_overlap_published_case():
    best = best_overlap("hello there general dude", ["hello there general kenobi", "hello there!"])
    assert best.precision == pytest.approx(0.75)
    assert best.recall == pytest.approx(1.0)
    assert best.f1 == pytest.approx(0.75)


def test_measures_are_maximised_separately():
    # precision 0.75 and recall 1.0 come from different references; the best F1 is the first reference's
    first = overlap(token_bag("hello there general dude"), token_bag("hello there general kenobi"))
    second = overlap(token_bag("hello there general dude"), token_bag("hello there!"))
    assert (first.precision, first.recall) == (0.75, 0.75)
    assert (second.precision, second.recall) == (0.5, 1.0)


def test_k_precision_published_cases():
    assert best_overlap("B", ["B C", "C"]).precision == 1.0
    assert best_overlap("B C D", ["D"]).precision == pytest.approx(1 / 3)


def test_token_recall_published_case():
    assert best_overlap("B", ["B C", "C"]).recall == 0.5


def test_context_correctness_published_cases():
    flags = relevance_flags(["A", "B", "C"], ["A", "C"])
    assert reciprocal_rank(flags) == 1.0
    assert average_precision(flags) == pytest.approx(0.8333333333333334)
    flags = relevance_flags(["A", "B"], ["B"])
    assert reciprocal_rank(flags) == 0.5
    assert average_precision(flags) == 0.5


def test_map_divides_by_relevant_retrieved_not_by_all_relevant():
    # trec_eval: (1/1) / 2 relevant = 0.5; Unitxt: (1/1) / 1 relevant retrieved = 1.0
    assert average_precision(relevance_flags(["A", "X"], ["A", "B"])) == 1.0


def test_no_relevant_or_nothing_retrieved_is_zero():
    assert reciprocal_rank(relevance_flags(["A"], [])) == 0.0
    assert average_precision(relevance_flags([], ["A"])) == 0.0


def test_repeated_retrieved_id_counts_each_time():
    assert average_precision(relevance_flags(["A", "A"], ["A"])) == 1.0


def test_multiset_counts():
    assert overlap(token_bag("cat cat cat"), token_bag("cat cat")).precision == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "text",
    [
        "The cat sat on the mat.",
        "U.S. 10,000 well-known don't",
        "A an THE theater another",
        "café Straße İstanbul naïve",
        "the–end an…a “the” a\x1cthe",
        "tab\tthe\nnew\x0bline\x0cthe\rx",
        "x\x00the y\x7fan",
        "Ǆ ǅ the",
        "",
        "...",
        "the a an",
        "e\u0301the the\u0301",
    ],
)
def test_plain_tokens_equal_the_squad_normalisation(text):
    assert plain_tokens(text) == answer_tokens(text)
    assert token_bag(text).size == len(answer_tokens(text))
