"""The declared component contracts: options forbid unknown keys, failed plugins named in "not found" errors,
rerankers as a kind, declared embedder and retriever methods (async, traced), DatasetSource.summary."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel, ConfigDict, Field

from ragassay import (
    Chunk,
    ComponentContext,
    ComponentNotFoundError,
    Corpus,
    DatasetSource,
    Document,
    Embedder,
    Encoded,
    Generation,
    Generator,
    PluginError,
    Reranker,
    Retriever,
    Sample,
    ScoredChunk,
    hookimpl,
)
from ragassay.components import KIND_BASES
from ragassay.hookspecs import HOOK_KINDS
from ragassay.plugin_manager import get_plugin_host, load_plugins
from ragassay.plugins.dense.embedding import identity
from ragassay.reference_rags.naive import NaiveRAG
from ragassay.registry import Registry

CHUNKS = [Chunk(id=f"c{i}", document_id="d", text=t) for i, t in enumerate(["alpha beta", "gamma", "beta delta"])]


class LaxOptions(BaseModel):
    value: int = Field(1, description="A value.")


class LaxRetriever(Retriever):
    """Its options accept unknown keys."""

    name = "lax"
    Options = LaxOptions


def test_registry_refuses_options_that_accept_unknown_keys():
    with pytest.raises(PluginError) as caught:
        Registry().add("retriever", LaxRetriever, plugin="laxplugin", distribution="lax", version="1")
    message = str(caught.value)
    assert "plugin 'laxplugin'" in message and "LaxOptions" in message
    assert 'model_config = ConfigDict(extra="forbid")' in message


def test_every_shipped_component_forbids_unknown_options():
    host = load_plugins()
    assert not host.failures, host.failures
    for info in host.registry.all():
        assert info.cls.Options.model_config.get("extra") == "forbid", (info.kind, info.name)


class Broken:
    @hookimpl
    def register_retrievers(self, register):
        raise RuntimeError("cannot import torch_sparse")


def test_not_found_names_the_failed_plugin_that_would_provide_it():
    host = load_plugins([("sparse", Broken())], entry_points=False)
    with pytest.raises(ComponentNotFoundError) as caught:
        host.registry.get("retriever", "sparse/splade")
    message = str(caught.value)
    assert "no retriever named 'sparse/splade'" in message
    assert "it would come from plugin 'sparse' (RuntimeError: cannot import torch_sparse)" in message
    assert "`ragassay plugins`" in message and "RAGASSAY_DISABLE_PLUGINS=sparse" in message


def test_not_found_lists_failed_plugins_as_possible_providers():
    host = load_plugins([("sparse", Broken())], entry_points=False)
    with pytest.raises(ComponentNotFoundError, match="possible providers that failed to load: 'sparse'"):
        host.registry.get("retriever", "splade")
    assert "failed" not in Registry().not_found_message("retriever", "splade")  # nothing failed: no hint


def test_rerankers_are_their_own_kind():
    assert KIND_BASES["reranker"] is Reranker and HOOK_KINDS["register_rerankers"] == "reranker"
    assert not issubclass(Reranker, Retriever)
    reranker = load_plugins().registry.get("reranker", "overlap").cls()
    hits = [ScoredChunk(chunk=c, score=1.0, rank=i) for i, c in enumerate(CHUNKS, 1)]
    ranked = reranker.rerank("beta delta", hits, 2)
    assert [(h.chunk.id, h.score, h.rank) for h in ranked] == [("c2", 1.0, 1), ("c0", 0.5, 2)]


def test_dataset_source_summary_is_declared_with_an_empty_default():
    class Plain(DatasetSource):
        name = "plain"

    assert Plain().summary() == []


class TwoDims(Embedder):
    """embed only: the declared defaults do the rest."""

    name = "two_dims"

    def embed(self, texts):
        return [[float(len(t)), 1.0] for t in texts]


def test_embedder_encode_and_cache_identity_are_declared_defaults():
    encoded = TwoDims().encode(["ab", "abc"])
    assert isinstance(encoded, Encoded) and encoded.vectors == [[2.0, 1.0], [3.0, 1.0]]
    assert encoded.tokens == [None, None] and encoded.truncated_count == 0
    assert TwoDims().cache_identity() == {"options": {}} and TwoDims.dimension is None
    assert identity(TwoDims())["embedder"] == "two_dims"


class NetworkRetriever(Retriever):
    """Only asynchronous: a synchronous call would block the event loop."""

    name = "network"

    def index(self, chunks):
        self.chunks = list(chunks)

    def retrieve(self, query, k):
        raise AssertionError("a network retriever is called through aretrieve")

    async def aretrieve(self, query, k):
        await asyncio.sleep(0)
        return [ScoredChunk(chunk=c, score=1.0, rank=i) for i, c in enumerate(self.chunks[:k], 1)]


class TracedRetriever(NetworkRetriever):
    """Reports a per-query trace."""

    name = "traced"

    def retrieve_traced(self, query, k):
        return [ScoredChunk(chunk=self.chunks[-1], score=2.0, rank=1)], {"query": query, "k": k}


class Echo(Generator):
    name = "echo"

    async def generate(self, request):
        return Generation(text=" | ".join(c.id for c in request.contexts))


def naive_with(retriever: Retriever, tmp_path) -> NaiveRAG:
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path)
    parts = {"chunker": context.build("chunker", "recursive"), "retriever": retriever, "generator": Echo()}
    rag = NaiveRAG(NaiveRAG.Options(top_k=2), parts=parts, context=context)
    rag.prepare(Corpus([Document(id="d", text="alpha beta")]))
    retriever.chunks = CHUNKS
    return rag


def test_reference_rag_retrieves_asynchronously_and_stores_the_trace(tmp_path):
    sample = Sample(question_id="q", question="beta?")
    output = asyncio.run(naive_with(NetworkRetriever(), tmp_path).answer(sample))
    assert output.context_ids == ["c0", "c1"] and output.trace["retrieval"] == {}
    traced = asyncio.run(naive_with(TracedRetriever(), tmp_path).answer(sample))
    assert traced.context_ids == ["c2"] and traced.trace["retrieval"] == {"query": "beta?", "k": 2}


def test_retriever_defaults_route_sync_retrievers_through_retrieve():
    class Sync(Retriever):
        name = "sync"

        def retrieve(self, query, k):
            return [ScoredChunk(chunk=CHUNKS[0], score=1.0, rank=1)]

    assert asyncio.run(Sync().aretrieve("q", 1)) == Sync().retrieve("q", 1)
    assert asyncio.run(Sync().aretrieve_traced("q", 1)) == (Sync().retrieve("q", 1), {})
    assert Sync().retrieve_traced("q", 1) == (Sync().retrieve("q", 1), {})


def test_extra_forbid_is_also_checked_for_lax_nested_config():
    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")

    class Fine(Retriever):
        name = "fine"
        Options = Strict

    assert Registry().add("retriever", Fine, plugin="p", distribution="p", version="1").name == "p/fine"
