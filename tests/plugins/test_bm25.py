"""The BM25 retriever: ranking on a small corpus, parameters, ties, empty corpus, option errors, rank_bm25 parity."""

from __future__ import annotations

import math
import random

import pydantic
import pytest
import rank_bm25

from ragassay import words
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
    lengths = [len(words(text, drop_stopwords=True)) for text in CORPUS]
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


def test_defaults_depend_on_the_variant():
    okapi = BM25Retriever.Options().effective()
    assert (okapi["k1"], okapi["b"], okapi["epsilon"], okapi["stopwords"]) == (1.5, 0.75, 0.25, "ragassay")
    assert (okapi["stemmer"], okapi["fields"], okapi["query_terms"]) == ("none", ["text"], "each")
    lucene = BM25Retriever.Options(variant="lucene").effective()
    assert (lucene["k1"], lucene["b"], lucene["length_norm"]) == (1.2, 0.75, "exact")
    assert "epsilon" not in lucene
    assert BM25Retriever.Options(variant="lucene", k1=0.9).effective()["k1"] == 0.9


def test_effective_options_are_recorded_in_stats():
    r = retriever(variant="lucene", b=0.4)
    assert r.stats["options"]["k1"] == 1.2 and r.stats["options"]["b"] == 0.4
    assert r.stats["chunks"] == len(CORPUS) and r.stats["vocabulary"]["text"] > 10


# -- the okapi default is rank_bm25, bit for bit ----------------------------------------------------------------


def random_texts(seed: int, n: int, vocabulary: int = 60, low: int = 0, high: int = 40) -> list[str]:
    rng = random.Random(seed)
    pool = [f"w{i}" for i in range(vocabulary)] + ["the", "of", "and"]
    # Zipf-like: low ids are common (some terms in more than half the chunks: negative idf, floored)
    weights = [1 / (i + 1) for i in range(len(pool))]
    return [" ".join(rng.choices(pool, weights, k=rng.randint(low, high))) for _ in range(n)]


@pytest.mark.parametrize("options", [{}, {"k1": 0.9, "b": 0.3, "epsilon": 0.5}, {"drop_stopwords": False}])
def test_okapi_scores_equal_rank_bm25_exactly(options):
    texts = random_texts(7, 300)
    r = retriever(texts, **options)
    drop = options.get("drop_stopwords", True)
    corpus = [words(t, drop_stopwords=drop) for t in texts]
    params = {key: options[key] for key in ("k1", "b", "epsilon") if key in options}
    reference = rank_bm25.BM25Okapi(corpus, **params)
    floored = [t for t in reference.idf if reference.idf[t] == options.get("epsilon", 0.25) * reference.average_idf]
    assert floored  # the corpus exercises rank_bm25's idf floor
    for query in random_texts(11, 40, low=1, high=8) + ["w0 w0 w1 the", "nothing here"]:
        positions, scores = r.scores(query)
        terms = words(query, drop_stopwords=drop)
        expected = reference.get_scores(terms)
        containing = [i for i, doc in enumerate(corpus) if set(doc) & set(terms)]
        assert positions.tolist() == containing
        assert scores.tolist() == expected[containing].tolist()  # exact: no tolerance


def test_repeated_query_terms_count_each_time_unless_unique():
    r = retriever()
    _, once = r.scores("Geneva")
    _, twice = r.scores("Geneva Geneva")
    assert twice.tolist() == (2 * once).tolist()
    unique = retriever(query_terms="unique")
    assert unique.scores("Geneva Geneva")[1].tolist() == once.tolist()


def test_results_are_deterministic_across_instances():
    texts = random_texts(5, 200)
    first = [(h.chunk.id, h.score) for h in retriever(texts, variant="lucene").retrieve("w1 w2 w9", 50)]
    second = [(h.chunk.id, h.score) for h in retriever(texts, variant="lucene").retrieve("w1 w2 w9", 50)]
    assert first == second and len(first) == 50


# -- validation ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"variant": "lucene", "epsilon": 0.2}, "epsilon applies to variant 'okapi'"),
        ({"length_norm": "lucene"}, "length_norm 'lucene' applies to variant 'lucene'"),
        ({"drop_stopwords": False, "stopwords": "lucene"}, "contradicts"),
        ({"drop_stopwords": True, "stopwords": "none"}, "contradicts"),
        ({"fields": ["text", "text"]}, "names a field twice"),
        ({"fields": []}, "at least 1"),
        ({"field_boosts": {"title": 2.0}}, "not in fields"),
        ({"fields": ["title", "text"], "field_boosts": {"title": 0}}, "positive"),
        ({"fields": ["abstract"]}, "title"),
        ({"stemmer": "snowball"}, "english"),
        ({"stopwords": "nltk"}, "lucene"),
        ({"tie_breaker": 1.5}, "less than or equal to 1"),
        ({"variant": "bm25+"}, "okapi"),
    ],
)
def test_inconsistent_options_are_rejected_with_the_reason(bad, message):
    with pytest.raises(pydantic.ValidationError, match=message):
        BM25Retriever.Options(**bad)


def test_consistent_stop_word_settings_are_accepted():
    assert BM25Retriever.Options(drop_stopwords=True, stopwords="lucene").effective()["stopwords"] == "lucene"
    assert BM25Retriever.Options(drop_stopwords=False).effective()["stopwords"] == "none"
    assert BM25Retriever.Options(stopwords="none").effective()["stopwords"] == "none"
