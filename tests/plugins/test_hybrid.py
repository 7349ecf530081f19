"""The hybrid retriever: reciprocal rank fusion by hand, real keyword+BM25 fusion, the rerank hook, bad options."""

from __future__ import annotations

import pydantic
import pytest
from pydantic import BaseModel, ConfigDict, Field

from ragassay import (
    Chunk,
    ComponentContext,
    ComponentNotFoundError,
    DatasetError,
    Reranker,
    RerankerRef,
    Retriever,
    RetrieverRef,
    ScoredChunk,
    hookimpl,
)
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.hybrid import HybridRetriever, reciprocal_rank_fusion

CHUNKS = [
    Chunk(id=f"c{i}", document_id=f"d{i}", text=text)
    for i, text in enumerate(
        [
            "salmon swim up rivers to spawn",
            "bees make honey from nectar",
            "the river Aare flows through Bern",
            "stars fuse hydrogen into helium",
            "honey bees dance in the hive",
        ]
    )
]


class Scripted(Retriever):
    """Returns a fixed ranking of chunk ids (scripted)."""

    name = "scripted"
    indexed: list[int] = []

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        ranking: list[str] = Field(default_factory=list, description="Chunk ids, best first.")

    def index(self, chunks):
        type(self).indexed.append(len(chunks))
        self.chunks = {c.id: c for c in chunks}

    def retrieve(self, query, k):
        return [
            ScoredChunk(chunk=self.chunks[cid], score=1.0 / rank, rank=rank)
            for rank, cid in enumerate(self.options.ranking[:k], start=1)
        ]


class ShortestFirst(Reranker):
    """Reorders candidates by text length, shortest first (a stand-in for a cross-encoder)."""

    name = "shortest"
    seen: list[list[str]] = []

    def rerank(self, query, hits, k):
        type(self).seen.append([h.chunk.id for h in hits])
        ordered = sorted(hits, key=lambda h: len(h.chunk.text))
        return [ScoredChunk(chunk=h.chunk, score=-len(h.chunk.text), rank=i) for i, h in enumerate(ordered[:k], 1)]


class Testing:
    @hookimpl
    def register_retrievers(self, register):
        register(Scripted)

    @hookimpl
    def register_rerankers(self, register):
        register(ShortestFirst)


@pytest.fixture
def context(tmp_path):
    Scripted.indexed, ShortestFirst.seen = [], []
    registry = load_plugins([("t", Testing())]).registry
    return ComponentContext(project_dir=tmp_path, cache_dir=tmp_path / ".cache", registry=registry)


def hybrid(context, **options) -> HybridRetriever:
    retriever = context.build("retriever", {"name": "hybrid", "options": options})
    retriever.index(CHUNKS)
    return retriever


def scripted(*ids):
    return {"name": "t/scripted", "options": {"ranking": list(ids)}}


def test_registered_with_bm25_and_dense_by_default():
    info = load_plugins().registry.get("retriever", "hybrid")
    assert info.plugin == "hybrid" and info.cls is HybridRetriever
    assert HybridRetriever.Options().retrievers == [RetrieverRef(name="bm25"), RetrieverRef(name="dense")]
    assert HybridRetriever.Options().rrf_k == 60


def test_nested_references_are_typed_so_the_plan_can_resolve_them():
    options = HybridRetriever.Options(
        retrievers=["bm25", {"name": "keyword", "options": {"count": "occurrences"}}], reranker="overlap"
    )
    assert all(type(ref) is RetrieverRef for ref in options.retrievers)
    assert options.retrievers[1].options == {"count": "occurrences"}
    assert type(options.reranker) is RerankerRef and options.reranker.name == "overlap"


def test_rrf_by_hand():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]], k=60)
    assert fused == pytest.approx({"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61})
    weighted = reciprocal_rank_fusion([["a"], ["b"]], k=0, weights=[1.0, 3.0])
    assert weighted == {"a": 1.0, "b": 3.0}


def test_fusion_ranks_scores_and_trace(context):
    retriever = hybrid(context, retrievers=[scripted("c0", "c1", "c2"), scripted("c2", "c0", "c4")], rrf_k=1)
    hits, trace = retriever.retrieve_traced("q", 4)
    # c0: 1/2 + 1/3, c2: 1/4 + 1/2, c1: 1/3, c4: 1/4
    assert [h.chunk.id for h in hits] == ["c0", "c2", "c1", "c4"]
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert hits[0].score == pytest.approx(1 / 2 + 1 / 3) and hits[1].score == pytest.approx(3 / 4)
    assert Scripted.indexed == [5, 5]  # every part indexed the same chunks
    assert retriever.retrieve("q", 4) == hits
    assert trace["ranks"]["c0"] == {"0:t/scripted": 1, "1:t/scripted": 2}
    assert trace["ranks"]["c1"] == {"0:t/scripted": 2}
    assert trace["reranked"] is False


def test_equal_fused_scores_keep_index_order_and_k_cuts(context):
    retriever = hybrid(context, retrievers=[scripted("c3"), scripted("c1")])
    assert [h.chunk.id for h in retriever.retrieve("q", 5)] == ["c1", "c3"]
    assert [h.chunk.id for h in retriever.retrieve("q", 1)] == ["c1"]
    assert retriever.retrieve("q", 0) == []


def test_weights_favour_one_retriever(context):
    retriever = hybrid(context, retrievers=[scripted("c0", "c1"), scripted("c1", "c0")], weights=[1.0, 2.0])
    assert [h.chunk.id for h in retriever.retrieve("q", 2)] == ["c1", "c0"]


def test_real_keyword_and_bm25_fusion(context):
    retriever = hybrid(context, retrievers=["keyword", "bm25"])
    hits, trace = retriever.retrieve_traced("honey bees in the hive", 3)
    assert hits[0].chunk.id == "c4"  # first for both retrievers
    assert {h.chunk.id for h in hits} >= {"c1", "c4"}
    assert set(trace["ranks"]["c4"]) == {"keyword", "bm25"}


def test_rerank_hook_reorders_the_fused_candidates(context):
    retriever = hybrid(
        context,
        retrievers=[scripted("c0", "c1", "c2", "c3"), scripted("c3", "c2")],
        reranker="t/shortest",
        rerank_candidates=3,
    )
    hits, trace = retriever.retrieve_traced("q", 2)
    assert ShortestFirst.seen == [["c3", "c2", "c0"]]  # the top 3 fused candidates
    assert [h.chunk.id for h in hits] == ["c0", "c3"]  # shortest texts first: fused third is now first
    assert [h.rank for h in hits] == [1, 2] and trace["reranked"] is True


def test_shipped_overlap_reranker_reorders_by_shared_query_words(context):
    retriever = hybrid(
        context,
        retrievers=[scripted("c3", "c0", "c2"), scripted("c3", "c2", "c0")],
        reranker="overlap",
        rerank_candidates=3,
    )
    hits, trace = retriever.retrieve_traced("salmon in rivers", 3)
    # c0 holds 'salmon' and 'rivers' (2/2); c2 and c3 none: ties keep the fused order c3, then c2
    assert [h.chunk.id for h in hits] == ["c0", "c3", "c2"] and [h.score for h in hits] == [1.0, 0.0, 0.0]
    assert trace["reranked"] is True


def test_a_retriever_is_not_a_reranker(context):
    with pytest.raises(ComponentNotFoundError, match="no reranker named 'bm25'"):
        hybrid(context, retrievers=["keyword", "bm25"], reranker="bm25")


def test_bad_options_and_input(context):
    with pytest.raises(pydantic.ValidationError, match="at least 2"):
        HybridRetriever.Options(retrievers=["bm25"])
    with pytest.raises(pydantic.ValidationError, match="weights has 3 values for 2 retrievers"):
        HybridRetriever.Options(retrievers=["bm25", "keyword"], weights=[1, 1, 1])
    with pytest.raises(pydantic.ValidationError, match="name"):
        HybridRetriever.Options(retrievers=["bm25", {"options": {}}])
    with pytest.raises(DatasetError, match="no chunks"):
        context.build("retriever", "hybrid").index([])
    with pytest.raises(RuntimeError, match="before index"):
        context.build("retriever", "hybrid").retrieve("q", 1)
