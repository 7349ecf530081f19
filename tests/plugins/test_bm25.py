"""The BM25 retriever: ranking on a small corpus, parameters, ties, empty corpus and option errors."""

from __future__ import annotations

import math

import pydantic
import pytest

from ragassay.errors import DatasetError
from ragassay.models import Chunk
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.bm25 import BM25Retriever

CORPUS = (
    "The Rhine flows through Basel and forms the border with Germany.",
    "Zürich lies on Lake Zürich; the Limmat flows out of the lake.",
    "Bern is the federal city of Switzerland, on the river Aare.",
    "Geneva hosts many international organisations.",
    "Lugano is in the Italian-speaking canton of Ticino.",
    "Sean O'Brien opened a bakery in Basel.",
)


def chunks(*texts: str) -> list[Chunk]:
    return [Chunk(id=f"c{i}", document_id=f"d{i}", text=text) for i, text in enumerate(texts)]


def retriever(texts=CORPUS, **options) -> BM25Retriever:
    r = BM25Retriever(BM25Retriever.Options(**options))
    r.index(chunks(*texts))
    return r


def test_registered_through_entry_point():
    info = load_plugins().registry.get("retriever", "bm25")
    assert info.plugin == "bm25"
    assert info.cls is BM25Retriever


def test_top_document_and_descending_scores():
    hits = retriever().retrieve("Which river flows through Basel near Germany?", 5)
    assert hits[0].chunk.id == "c0"  # flows, basel, germany
    assert {h.chunk.id for h in hits} == {"c0", "c1", "c2", "c5"}  # only chunks sharing a term
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[1]


def test_rare_term_outweighs_two_common_ones():
    # "river" is in one chunk, "flows" and "basel" in two each: IDF puts the Aare chunk first
    assert [h.chunk.id for h in retriever().retrieve("Which river flows through Basel?", 2)] == ["c2", "c0"]


def test_score_matches_the_okapi_formula():
    # One term in one chunk of six: idf = ln((6 - 1 + 0.5) / (1 + 0.5)); tf = 1
    r = retriever()
    lengths = [len(r._words(text)) for text in CORPUS]
    avgdl = sum(lengths) / len(lengths)
    idf = math.log(5.5 / 1.5)
    expected = idf * (1 * 2.5) / (1 + 1.5 * (1 - 0.75 + 0.75 * lengths[3] / avgdl))
    [hit] = r.retrieve("Geneva", 3)
    assert hit.chunk.id == "c3" and hit.score == pytest.approx(expected)


def test_accents_are_folded():
    assert [h.chunk.id for h in retriever().retrieve("zurich", 3)] == ["c1"]


def test_length_normalisation_b():
    texts = ("apple one two three four five six seven", "apple one", "pear", "plum", "kiwi", "fig")
    assert [h.chunk.id for h in retriever(texts).retrieve("apple", 2)] == ["c1", "c0"]  # shorter first
    flat = retriever(texts, b=0.0).retrieve("apple", 2)
    assert flat[0].score == pytest.approx(flat[1].score)
    assert [h.chunk.id for h in flat] == ["c0", "c1"]  # tie: index order


def test_ties_are_broken_by_position():
    texts = ["apple tart"] * 30 + ["pear"] * 40
    hits = retriever(texts).retrieve("apple", 5)
    assert [h.chunk.id for h in hits] == ["c0", "c1", "c2", "c3", "c4"]
    assert len({h.score for h in hits}) == 1


def test_stopwords_dropped_by_default():
    assert retriever().retrieve("the of and", 3) == []
    kept = retriever(drop_stopwords=False).retrieve("the of and", 3)
    assert kept and all("the" in h.chunk.text.lower().split() for h in kept)


def test_no_match_returns_nothing():
    assert retriever().retrieve("quantum", 3) == []
    assert retriever().retrieve("", 3) == []


def test_chunks_without_words_are_indexed_but_never_returned():
    r = retriever(("...", "!!!"))
    assert r.retrieve("anything", 3) == []


def test_empty_corpus_is_a_dataset_error():
    with pytest.raises(DatasetError, match="corpus has no chunks"):
        BM25Retriever().index([])


def test_retrieve_before_index_is_a_clear_error():
    with pytest.raises(RuntimeError, match="before index"):
        BM25Retriever().retrieve("basel", 3)


@pytest.mark.parametrize("bad", [{"k1": -1}, {"b": 1.5}, {"epsilon": -0.1}, {"k": 3}])
def test_bad_options_are_rejected(bad):
    with pytest.raises(pydantic.ValidationError):
        BM25Retriever.Options(**bad)


def test_defaults():
    options = BM25Retriever.Options()
    assert (options.k1, options.b, options.epsilon, options.drop_stopwords) == (1.5, 0.75, 0.25, True)
