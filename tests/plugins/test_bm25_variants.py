"""BM25 variants: Lucene scoring, the idf floor, title/text fields, Lucene's lossy lengths; hand-computed and direct."""

from __future__ import annotations

import logging
import math
import random

import pytest

from ragassay.errors import DatasetError
from ragassay.models import Chunk
from ragassay.plugins.bm25 import BM25Retriever
from ragassay.plugins.bm25_scoring import lucene_length

L16 = math.log(1.6)  # Lucene idf of a term in 2 of 3 documents: ln(1 + (3 - 2 + 0.5) / (2 + 0.5))
L83 = math.log(8 / 3)  # Lucene idf of a term in 1 of 3 documents: ln(1 + (3 - 1 + 0.5) / (1 + 0.5))


def chunks(*texts: str, titles=None) -> list[Chunk]:
    return [
        Chunk(
            id=f"c{i}",
            document_id=f"d{i}",
            text=text,
            metadata={} if titles is None or titles[i] is None else {"title": titles[i]},
        )
        for i, text in enumerate(texts)
    ]


def build(items: list[Chunk], **options) -> BM25Retriever:
    r = BM25Retriever(BM25Retriever.Options(**options))
    r.index(items)
    return r


def scored(r: BM25Retriever, query: str) -> dict[str, float]:
    positions, scores = r.scores(query)
    return {r._chunks[p].id: s for p, s in zip(positions.tolist(), scores.tolist())}


# -- hand-computed cases ------------------------------------------------------------------------------------


def test_lucene_hand_computed():
    # c3 has no term after the Lucene stop words: Lucene's docCount skips it, so N = 3 and avgdl = 6 / 3 = 2.
    r = build(chunks("apple banana", "apple apple cherry", "cherry", "of the"), variant="lucene", stopwords="lucene")
    # apple (n = 2, idf ln 1.6). c0: tf 1, dl 2: 1.2·(0.25 + 0.75·2/2) = 1.2, 1·2.2/(1 + 1.2) = 1
    # c1: tf 2, dl 3: 1.2·(0.25 + 0.75·3/2) = 1.65, 2·2.2/(2 + 1.65)
    got = scored(r, "apple")
    assert got == pytest.approx({"c0": L16, "c1": L16 * 4.4 / 3.65}, abs=1e-12)
    # banana (n = 1, idf ln 8/3) in c0 (tf part 1); cherry (idf ln 1.6) in c1 (dl 3: 2.2/2.65) and c2 (dl 1:
    # 1.2·(0.25 + 0.75·1/2) = 0.75, 2.2/1.75)
    got = scored(r, "cherry banana")
    assert got == pytest.approx({"c0": L83, "c1": L16 * 2.2 / 2.65, "c2": L16 * 2.2 / 1.75}, abs=1e-12)


def test_okapi_idf_floor_hand_computed():
    # rank_bm25: idf = ln(N − n + 0.5) − ln(n + 0.5), N = 3. apple and cherry (n = 2): ln(1.5/2.5) = ln 0.6 < 0;
    # banana (n = 1): ln(2.5/1.5) = −ln 0.6. Mean idf = ln(0.6)/3; the floor is 0.25 × that (negative here).
    r = build(chunks("apple banana", "apple apple cherry", "cherry"), stopwords="none")
    floor = 0.25 * math.log(0.6) / 3
    # c0: tf 1, dl 2, avgdl 2: 1.5·(0.25 + 0.75) = 1.5, 1·2.5/(1 + 1.5) = 1; c1: tf 2, dl 3: 1.5·1.375 = 2.0625
    assert scored(r, "apple") == pytest.approx({"c0": floor, "c1": floor * 5 / 4.0625}, abs=1e-12)
    assert scored(r, "banana") == pytest.approx({"c0": -math.log(0.6)}, abs=1e-12)


def test_best_fields_hand_computed():
    titles = ["apple pie", "cherry", "banana"]
    items = chunks("banana", "apple apple", "cherry tart", titles=titles)
    r = build(items, variant="lucene", stopwords="none", fields=["title", "text"], tie_breaker=0.5)
    # title field: lengths 2, 1, 1, avgdl 4/3; text field: lengths 1, 2, 2, avgdl 5/3; every term has n = 1 in
    # its field: idf ln 8/3.
    # "apple": c0 by title (tf 1, dl 2: 1.2·(0.25 + 0.75·2/(4/3)) = 1.65, 2.2/2.65); c1 by text (tf 2, dl 2:
    # 1.2·(0.25 + 0.75·2/(5/3)) = 1.38, 4.4/3.38). One field each: the score is that field's.
    assert scored(r, "apple") == pytest.approx({"c0": L83 * 2.2 / 2.65, "c1": L83 * 4.4 / 3.38}, abs=1e-12)
    # "apple banana": c0 matches apple in its title (2.2/2.65) and banana in its text (dl 1: 1.2·(0.25 + 0.45) =
    # 0.84, 2.2/1.84): best = text, + 0.5 × title. c2: banana in its title (dl 1: 1.2·(0.25 + 0.5625) = 0.975).
    got = scored(r, "apple banana")
    assert got["c0"] == pytest.approx(L83 * 2.2 / 1.84 + 0.5 * L83 * 2.2 / 2.65, abs=1e-12)
    assert got["c2"] == pytest.approx(L83 * 2.2 / 1.975, abs=1e-12)
    # a title boost of 2 makes the title c0's best field
    boosted = scored(build(items, **{**r.options.model_dump(), "field_boosts": {"title": 2.0}}), "apple banana")
    assert boosted["c0"] == pytest.approx(2 * L83 * 2.2 / 2.65 + 0.5 * L83 * 2.2 / 1.84, abs=1e-12)


def test_lucene_lengths_match_lucenes_byte_table():
    # SmallFloat.byte4ToInt(intToByte4(n)): exact below 24, then 4 significant bits of n − 24, rounded down
    table = {0: 0, 1: 1, 23: 23, 24: 24, 39: 39, 40: 40, 41: 40, 54: 54, 55: 54, 56: 56, 57: 56, 250: 248}
    assert {n: lucene_length(n) for n in table} == table
    decoded = [lucene_length(n) for n in range(5000)]
    assert all(a <= b for a, b in zip(decoded, decoded[1:])) and all(d <= n for n, d in enumerate(decoded))
    assert all(n - d <= (n - 24) / 8 for n, d in enumerate(decoded) if n >= 24)


def test_lossy_lengths_change_only_long_chunks():
    texts = ["apple " + "pad " * 40, "apple " + "pad " * 9, "cherry"]  # lengths 41 (stored as 40) and 10
    exact = scored(build(chunks(*texts), variant="lucene", stopwords="none"), "apple")
    lossy = scored(build(chunks(*texts), variant="lucene", stopwords="none", length_norm="lucene"), "apple")
    assert lossy["c1"] == exact["c1"] and lossy["c0"] > exact["c0"]
    avgdl = (41 + 10 + 1) / 3
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    assert lossy["c0"] == pytest.approx(idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 40 / avgdl)), abs=1e-12)


# -- against a direct computation ---------------------------------------------------------------------------


def direct_lucene(docs, query, k1=1.2, b=0.75, lossy=False):
    """Lucene BM25 per document, term by term, from the formula (no index)."""
    present = [d for d in docs if d]
    n_docs, avgdl = len(present), sum(map(len, present)) / len(present)
    scores = {}
    for i, doc in enumerate(docs):
        if not set(doc) & set(query):
            continue
        dl = lucene_length(len(doc)) if lossy else len(doc)
        total = 0.0
        for term in query:
            tf = doc.count(term)
            if tf:
                n = sum(term in d for d in docs)
                idf = math.log(1 + (n_docs - n + 0.5) / (n + 0.5))
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
        scores[i] = total
    return scores


def random_docs(rng, n, low, high, vocabulary=40):
    pool = [f"t{i}" for i in range(vocabulary)]
    weights = [1 / (i + 1) for i in range(vocabulary)]
    return [rng.choices(pool, weights, k=rng.randint(low, high)) for _ in range(n)]


@pytest.mark.parametrize("params", [{}, {"k1": 0.8, "b": 0.3}, {"length_norm": "lucene"}])
def test_lucene_equals_a_direct_computation(params):
    rng = random.Random(21)
    docs = random_docs(rng, 150, 0, 120)
    r = build(chunks(*[" ".join(d) for d in docs]), variant="lucene", stopwords="none", **params)
    for query in random_docs(rng, 30, 1, 6):
        expected = direct_lucene(
            docs, query, params.get("k1", 1.2), params.get("b", 0.75), params.get("length_norm") == "lucene"
        )
        got = scored(r, " ".join(query))
        assert list(got) == [f"c{i}" for i in expected]
        assert list(got.values()) == pytest.approx(list(expected.values()), rel=1e-12)


def test_best_fields_equal_a_direct_computation():
    rng = random.Random(5)
    texts, titles = random_docs(rng, 120, 0, 60), random_docs(rng, 120, 0, 6)
    titles[3] = []  # an untitled chunk
    items = chunks(*[" ".join(d) for d in texts], titles=[" ".join(t) for t in titles])
    boosts, tie = {"title": 1.7, "text": 0.9}, 0.3
    r = build(items, variant="lucene", stopwords="none", fields=["title", "text"], field_boosts=boosts, tie_breaker=tie)
    for query in random_docs(rng, 25, 1, 5):
        by_title, by_text = direct_lucene(titles, query), direct_lucene(texts, query)
        expected = {}
        for i in sorted(set(by_title) | set(by_text)):
            fields = [boosts["title"] * by_title[i]] if i in by_title else []
            fields += [boosts["text"] * by_text[i]] if i in by_text else []
            expected[f"c{i}"] = max(fields) + tie * (sum(fields) - max(fields))
        got = scored(r, " ".join(query))
        assert list(got) == list(expected)
        assert list(got.values()) == pytest.approx(list(expected.values()), rel=1e-12)


# -- the title field ----------------------------------------------------------------------------------------


def test_title_field_without_any_title_is_an_error():
    with pytest.raises(DatasetError, match=r"no chunk has metadata\['title'\].*document chunker"):
        build(chunks("apple", "pear"), fields=["title", "text"])


def test_title_that_is_not_text_is_an_error():
    with pytest.raises(DatasetError, match="c1.*not text"):
        build(chunks("apple", "pear", titles=["Fruit", 3]), fields=["title", "text"])


def test_untitled_chunks_are_reported(caplog):
    with caplog.at_level(logging.WARNING, logger="ragassay.bm25"):
        r = build(chunks("apple", "pear", "plum", titles=["Pome", None, ""]), fields=["title", "text"])
    assert "2 of 3 chunks have no title" in caplog.text
    assert list(scored(r, "pome")) == ["c0"]


def test_title_only_field():
    r = build(chunks("apple", "pear", titles=["Fruit salad", "Pear tart"]), fields=["title"])
    assert list(scored(r, "pear")) == ["c1"] and scored(r, "apple") == {}
