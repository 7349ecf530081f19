"""The bm25 analyzer: stop-word lists, stemmers, the possessive filter, and their effect on retrieval."""

from __future__ import annotations

import pytest

from ragassay import STOPWORDS
from ragassay.models import Chunk
from ragassay.plugins.bm25 import BM25Retriever
from ragassay.plugins.bm25_analysis import LUCENE_STOPWORDS, Analyzer


def test_lucene_stop_set_is_englishanalyzers_33_words():
    assert len(LUCENE_STOPWORDS) == 33
    assert {"a", "an", "and", "the", "such", "will", "with", "into", "their"} <= LUCENE_STOPWORDS
    assert "he" not in LUCENE_STOPWORDS and "he" in STOPWORDS  # the lists differ


@pytest.mark.parametrize(
    "stopwords, expected",
    [
        ("none", ["he", "said", "the", "cat", "is", "not", "here"]),
        ("lucene", ["he", "said", "cat", "here"]),
        ("ragassay", ["said", "cat"]),
    ],
)
def test_stop_word_lists(stopwords, expected):
    assert Analyzer(stopwords).tokens("He said the cat is not here") == expected


def test_stemmers():
    text = "Running runs generalization connections dying"
    assert Analyzer("none", "none").tokens(text) == ["running", "runs", "generalization", "connections", "dying"]
    assert Analyzer("none", "english").tokens(text) == ["run", "run", "general", "connect", "die"]  # Porter2
    assert Analyzer("none", "porter").tokens(text) == ["run", "run", "gener", "connect", "dy"]  # Porter 1980


def test_stop_words_are_removed_before_stemming():
    # "was" is a Lucene stop word; "wa" (what a stemmer might make of it) is not looked up
    assert Analyzer("lucene", "porter").tokens("it was cats") == ["cat"]


def test_possessive_filter():
    text = "Lucene's scoring, the dog’s bone and it'sy"
    assert Analyzer("none", possessive=True).tokens(text) == [
        "lucene",
        "scoring",
        "the",
        "dog",
        "bone",
        "and",
        "it",
        "sy",
    ]
    assert Analyzer("none").tokens("Lucene's")[-1] == "s"


def test_many_equals_tokens_one_by_one():
    texts = ["Cats chasing mice", "", "the mouse's houses", "chased cats"]
    analyzer = Analyzer("lucene", "english", possessive=True)
    assert analyzer.many(texts) == [analyzer.tokens(t) for t in texts]


def retriever(*texts, **options) -> BM25Retriever:
    r = BM25Retriever(BM25Retriever.Options(**options))
    r.index([Chunk(id=f"c{i}", document_id=f"d{i}", text=t) for i, t in enumerate(texts)])
    return r


def test_stemming_lets_word_forms_match():
    texts = ("Network connections fail", "A quiet lake")
    assert retriever(*texts).retrieve("connected", 2) == []
    hits = retriever(*texts, stemmer="english").retrieve("connected", 2)
    assert [h.chunk.id for h in hits] == ["c0"]


def test_stop_word_choice_changes_what_matches():
    texts = ("he ran home", "she walked")
    assert retriever(*texts).retrieve("he", 2) == []  # ragassay's list drops "he"
    assert [h.chunk.id for h in retriever(*texts, stopwords="lucene").retrieve("he", 2)] == ["c0"]
    assert retriever(*texts, stopwords="lucene").retrieve("the will", 2) == []
