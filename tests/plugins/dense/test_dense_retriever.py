"""The dense retriever: exact ranking, HNSW/IVF, bad input, query truncation in the trace, the real model."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest

from ragassay import EmbedderRef
from ragassay.errors import ComponentNotFoundError, DatasetError
from ragassay.models import Chunk
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.dense import DenseRetriever

from dense_support import TEXTS, HashingEmbedder, context, dense, make_chunks, minilm_folder  # noqa: F401


def test_registered_with_defaults():
    registry = load_plugins().registry
    info = registry.get("retriever", "dense")
    assert info.plugin == "dense" and info.cls is DenseRetriever
    opts = DenseRetriever.Options()
    assert (opts.embedder, opts.index, opts.similarity) == (EmbedderRef(name="local"), "flat", "cosine")
    assert opts.cache is True
    assert type(DenseRetriever.Options(embedder={"name": "openai"}).embedder) is EmbedderRef  # typed: resolvable


def test_flat_ranking_is_exact_cosine(context):
    retriever = dense(context)
    retriever.index(make_chunks())
    embedder = HashingEmbedder()
    vectors = np.asarray(embedder.embed(list(TEXTS)))
    query = "bees make honey in the hive"
    expected = np.argsort(-(vectors @ np.asarray(embedder.embed([query]))[0]), kind="stable")[:4]
    hits = retriever.retrieve(query, 4)
    assert [h.chunk.id for h in hits] == [f"d{i}#0" for i in expected]
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert hits[0].score == pytest.approx(
        float(vectors[expected[0]] @ np.asarray(embedder.embed([query]))[0]), abs=1e-5
    )
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))


@pytest.mark.parametrize(
    "options", [{"index": "hnsw", "hnsw_m": 4, "ef_search": 8}, {"index": "ivf", "ivf_nlist": 2, "ivf_nprobe": 2}]
)
def test_approximate_indexes_find_the_same_neighbours_on_a_small_corpus(context, options):
    exact = dense(context)
    exact.index(make_chunks())
    approximate = dense(context, **options)
    approximate.index(make_chunks())
    for query in ("stars and telescopes", "the river flows in Switzerland", "honey bees and flowers"):
        expected = [(h.chunk.id, round(h.score, 5)) for h in exact.retrieve(query, 6) if h.score > 0]
        found = [(h.chunk.id, round(h.score, 5)) for h in approximate.retrieve(query, 6) if h.score > 0]
        assert len(expected) >= 2 and found == expected


def test_k_larger_than_the_corpus_and_k_zero(context):
    retriever = dense(context)
    retriever.index(make_chunks()[:2])
    assert len(retriever.retrieve("anything at all", 10)) == 2
    assert retriever.retrieve("anything", 0) == []


def test_empty_corpus_and_empty_chunks(context, caplog):
    with pytest.raises(DatasetError, match="no chunks to index"):
        dense(context).index([])
    with pytest.raises(DatasetError, match="all 2 chunks are empty"):
        dense(context).index([Chunk(id="a", document_id="a", text=""), Chunk(id="b", document_id="b", text="  \n")])
    retriever = dense(context)
    retriever.index([*make_chunks()[:2], Chunk(id="e#0", document_id="e", text=" ")])
    assert retriever.stats["skipped_empty"] == 1 and HashingEmbedder.calls[-1] == 2
    assert "e#0" not in {h.chunk.id for h in retriever.retrieve("salmon", 5)}
    assert "skipped 1 empty chunk" in caplog.text


def test_misuse_errors(context):
    with pytest.raises(RuntimeError, match="before index"):
        dense(context).retrieve("q", 1)
    with pytest.raises(ComponentNotFoundError, match="no embedder named 'nope'"):
        dense(context, embedder="nope").index(make_chunks())
    with pytest.raises(pydantic.ValidationError, match=r"embedder.name\n  Field required"):
        DenseRetriever.Options(embedder={"options": {}})
    with pytest.raises(pydantic.ValidationError):
        DenseRetriever.Options(index="annoy")


@pytest.mark.slow
def test_real_minilm_ranks_by_meaning_and_records_query_truncation(context):
    minilm_folder()
    docs = [
        "The recipe needs flour, butter, sugar and two eggs for the cake.",
        "The striker scored twice in the second half of the football match.",
        "Volcanic eruptions release ash and lava from the earth's mantle.",
    ]
    retriever = dense(context, embedder="local")
    retriever.index([Chunk(id=f"c{i}", document_id=f"c{i}", text=t) for i, t in enumerate(docs)])
    assert [h.chunk.id for h in retriever.retrieve("Which ingredients go into baking a dessert?", 3)][0] == "c0"
    assert retriever.retrieve("Who won the soccer game?", 1)[0].chunk.id == "c1"
    _, trace = retriever.retrieve_traced("Who won the soccer game?", 1)
    assert trace["query_truncated"] is False and trace["max_query_tokens"] == 256
    hits, trace = retriever.retrieve_traced("magma and lava " * 200, 1)
    assert hits[0].chunk.id == "c2"
    assert trace["query_truncated"] is True and trace["query_tokens"] > 256
