"""The openai embedder against a loopback server speaking the embeddings endpoint, through the real openai client."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.errors import ConfigError, ProviderError
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.dense.openai_embedder import OpenAIEmbedder

from dense_support import context, make_chunks  # noqa: F401 (fixture)
from servers.openai_embeddings import embeddings_server, text_vector

pytest.importorskip("openai")


@pytest.fixture(scope="module")
def shared_server():
    with embeddings_server(dim=6, reverse=True) as server:  # items answered in reverse order
        yield server


@pytest.fixture
def server(shared_server, monkeypatch):
    """The module's embeddings server with its request log cleared, and an API key in the environment."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    shared_server.requests.clear()
    return shared_server


def embedder(server, **options) -> OpenAIEmbedder:
    return OpenAIEmbedder(OpenAIEmbedder.Options(base_url=server.url + "/v1", max_retries=0, **options))


def test_registered_through_entry_point():
    info = load_plugins().registry.get("embedder", "openai")
    assert info.plugin == "dense" and info.cls is OpenAIEmbedder
    assert OpenAIEmbedder().options.model == "text-embedding-3-small"
    assert OpenAIEmbedder(OpenAIEmbedder.Options(model="text-embedding-ada-002")).dimension == 1536


def test_batches_requests_and_keeps_input_order(server):
    texts = [f"text number {i}" for i in range(10)]
    vectors = embedder(server, batch_size=4).embed(texts)
    assert [len(r.json["input"]) for r in server.requests] == [4, 4, 2]  # ceil(10 / 4) requests
    assert [t for r in server.requests for t in r.json["input"]] == texts
    assert vectors == [pytest.approx(text_vector(t, 6)) for t in texts]  # reversed replies re-ordered by index
    first = server.requests[0]
    assert first.path == "/v1/embeddings" and first.json["model"] == "text-embedding-3-small"
    assert first.headers["authorization"] == "Bearer sk-test"


def test_dimensions_and_model_are_sent(server):
    encoded = embedder(server, model="text-embedding-3-large", dimensions=3).encode(["a b", "c"])
    assert server.requests[0].json["dimensions"] == 3 and server.requests[0].json["model"] == "text-embedding-3-large"
    assert encoded.vectors.shape == (2, 3) and encoded.vectors.dtype == np.float32


def test_long_inputs_are_cut_and_recorded(server):
    encoded = embedder(server, max_input_chars=10).encode(["short", "x" * 25])
    assert server.requests[0].json["input"] == ["short", "x" * 10]
    assert encoded.truncated == [False, True]


def test_server_errors_become_provider_errors(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with embeddings_server(fail_status=500) as server:
        with pytest.raises(ProviderError, match="openai embedder: request to .* failed"):
            embedder(server).embed(["a"])


def test_empty_text_and_missing_key_are_config_errors(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIEmbedder().embed(["a"])
    with pytest.raises(ConfigError, match="text 1 is empty"):
        embedder(server).embed(["a", "  "])
    assert embedder(server).embed(["no key needed for a local server"])  # base_url set: key optional
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


def test_cache_identity_names_model_and_server_not_batching(monkeypatch):
    a = OpenAIEmbedder(OpenAIEmbedder.Options(base_url="http://x/v1", batch_size=3)).cache_identity()
    b = OpenAIEmbedder(OpenAIEmbedder.Options(base_url="http://x/v1", batch_size=9, timeout_s=5)).cache_identity()
    c = OpenAIEmbedder(OpenAIEmbedder.Options(base_url="http://y/v1")).cache_identity()
    assert a == b and a != c and a["model"] == "text-embedding-3-small"


def test_dense_retriever_over_the_openai_embedder(context, server):
    chunks = make_chunks()
    retriever = context.build(
        "retriever",
        {
            "name": "dense",
            "options": {"embedder": {"name": "openai", "options": {"base_url": server.url + "/v1", "batch_size": 4}}},
        },
    )
    retriever.index(chunks)
    hits = retriever.retrieve(chunks[2].text, 1)  # the server embeds equal texts equally
    assert hits[0].chunk.id == chunks[2].id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [len(r.json["input"]) for r in server.requests] == [4, 2, 1]  # 6 chunks in 2 requests, 1 query
