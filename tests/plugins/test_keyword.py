"""The keyword retriever: GRAMMAR keyword matching (number of shared words), options, ties, errors."""

from __future__ import annotations

import pydantic
import pytest

from ragassay.models import Chunk
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.keyword import KeywordRetriever


def chunks(*texts: str) -> list[Chunk]:
    return [Chunk(id=f"c{i}", document_id=f"d{i}", text=text) for i, text in enumerate(texts)]


def retriever(texts, **options) -> KeywordRetriever:
    r = KeywordRetriever(KeywordRetriever.Options(**options))
    r.index(chunks(*texts))
    return r


def hits(r: KeywordRetriever, query: str, k: int = 10) -> list[tuple[str, float, int]]:
    return [(h.chunk.id, h.score, h.rank) for h in r.retrieve(query, k)]


CORPUS = (
    "Cats chase mice in the barn.",
    "The old barn stands near the river.",
    "Quantum computers use qubits.",
)


def test_registered_through_entry_point():
    info = load_plugins().registry.get("retriever", "keyword")
    assert info.plugin == "keyword"
    assert info.cls is KeywordRetriever


def test_counts_shared_distinct_words():
    r = retriever(CORPUS)
    # c0 shares cats, chase, barn; c1 shares barn; c2 shares nothing and is not returned
    assert hits(r, "Do cats chase cats around a barn?") == [("c0", 3.0, 1), ("c1", 1.0, 2)]


def test_k_limits_results():
    assert hits(retriever(CORPUS), "cats chase barn", k=1) == [("c0", 3.0, 1)]
    assert hits(retriever(CORPUS), "cats chase barn", k=0) == []


def test_stopwords_counted_by_default_and_dropped_on_request():
    texts = ("the of and a in", "capital city")
    assert hits(retriever(texts), "the capital of the") == [("c0", 2.0, 1), ("c1", 1.0, 2)]
    assert hits(retriever(texts, drop_stopwords=True), "the capital of the") == [("c1", 1.0, 1)]


def test_occurrences_count_term_frequency():
    texts = ("cats chase barn", "barn barn barn")
    assert hits(retriever(texts), "barn") == [("c0", 1.0, 1), ("c1", 1.0, 2)]
    assert hits(retriever(texts, count="occurrences"), "barn") == [("c1", 3.0, 1), ("c0", 1.0, 2)]
    assert hits(retriever(texts, count="occurrences"), "barn cats") == [("c1", 3.0, 1), ("c0", 2.0, 2)]


def test_ties_follow_index_order():
    texts = ["red apple", "green apple", "apple pie", "banana"] * 3
    assert [cid for cid, _, _ in hits(retriever(texts), "apple", k=4)] == ["c0", "c1", "c2", "c4"]
    assert [cid for cid, _, _ in hits(retriever(texts), "apple red", k=3)] == ["c0", "c4", "c8"]
    reversed_r = KeywordRetriever()
    reversed_r.index(list(reversed(chunks(*texts))))
    assert [h.chunk.id for h in reversed_r.retrieve("apple red", 2)] == ["c8", "c4"]


def test_case_and_accents_are_folded():
    r = retriever(("Sean O'Brien moved to Zürich.", "Nothing here."))
    assert hits(r, "ZURICH obrien o'brien") == [("c0", 3.0, 1)]  # zurich, o, brien


def test_no_match_returns_nothing():
    assert hits(retriever(CORPUS), "zebra") == []
    assert hits(retriever(CORPUS), "") == []


def test_empty_index_returns_nothing():
    r = KeywordRetriever()
    r.index([])
    assert r.retrieve("cats", 5) == []


def test_retrieve_before_index_is_a_clear_error():
    with pytest.raises(RuntimeError, match="before index"):
        KeywordRetriever().retrieve("cats", 3)


def test_bad_options_are_rejected():
    with pytest.raises(pydantic.ValidationError):
        KeywordRetriever.Options(count="tfidf")
    with pytest.raises(pydantic.ValidationError):
        KeywordRetriever.Options(stopwords=True)


def test_many_chunks():
    texts = [f"token{i % 97} filler{i % 13} common" for i in range(20_000)]
    r = retriever(texts)
    top = r.retrieve("token5 filler5 common", 3)
    assert [h.score for h in top] == [3.0, 3.0, 3.0]
    assert [h.chunk.id for h in top] == ["c5", "c1266", "c2527"]  # i % 97 == 5 and i % 13 == 5, in order


def plain_keyword(texts: list[str], query: str, k: int, occurrences: bool) -> list[tuple[str, float]]:
    """GRAMMAR keyword matching written plainly: score every text, keep those sharing a word, best first."""
    from ragassay import words

    wanted = set(words(query))
    scored = []
    for position, text in enumerate(texts):
        tokens = words(text)
        score = sum(tokens.count(w) for w in wanted) if occurrences else len(wanted & set(tokens))
        if score:
            scored.append((-score, position))
    return [(f"c{position}", float(-score)) for score, position in sorted(scored)[:k]]


@pytest.mark.parametrize("count", ["distinct", "occurrences"])
def test_rankings_equal_a_plain_scan_on_random_corpora(count):
    import random

    rng = random.Random(count)
    vocabulary = [f"w{i}" for i in range(60)]
    for _ in range(20):
        texts = [" ".join(rng.choices(vocabulary, k=rng.randint(0, 30))) for _ in range(rng.randint(1, 80))]
        r = retriever(texts, count=count)
        for _ in range(5):
            query = " ".join(rng.choices(vocabulary + ["absent"], k=rng.randint(1, 6)))
            k = rng.randint(1, 40)
            expected = plain_keyword(texts, query, k, count == "occurrences")
            assert [(cid, score) for cid, score, _ in hits(r, query, k)] == expected
