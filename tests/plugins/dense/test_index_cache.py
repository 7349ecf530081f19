"""The dense cache: re-use without embedding, invalidation by every part of the key, corruption and dimension checks."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from ragassay.errors import ProviderError
from ragassay.models import Chunk
from ragassay.plugins.dense.cache import CacheMiss, DenseCache, embeddings_key, index_key
from ragassay.plugins.dense.embedding import identity

from dense_support import HashingEmbedder, context, dense, make_chunks  # noqa: F401 (fixture)


def entries(context):
    return sorted(p.name for p in (context.cache_dir / "dense").iterdir())


def test_second_index_reuses_the_embeddings_without_embedding(context):
    first = dense(context)
    first.index(make_chunks())
    assert first.stats["cache"] == "built" and HashingEmbedder.calls == [6]
    again = dense(context)  # a re-run, or another system with the same chunks and embedder
    again.index(make_chunks())
    assert again.stats["cache"] == "hit" and HashingEmbedder.calls == [6]
    query = "honey bees and flowers"
    assert [h.chunk.id for h in again.retrieve(query, 3)] == [h.chunk.id for h in first.retrieve(query, 3)]
    assert len(entries(context)) == 1


@pytest.mark.parametrize("change", ["text", "chunk_ids", "embedder_options", "embedder"])
def test_any_part_of_the_key_changing_rebuilds(context, change):
    dense(context).index(make_chunks())
    chunks, options = make_chunks(), {}
    if change == "text":  # corpus content
        chunks[3] = chunks[3].model_copy(update={"text": "The river Aare flows through Thun."})
    elif change == "chunk_ids":  # chunker settings give other chunks
        chunks = [c.model_copy(update={"id": c.id.replace("#0", "#1")}) for c in chunks]
    elif change == "embedder_options":
        options["embedder"] = {"name": "fake/hashing", "options": {"salt": "v2"}}
    else:
        options["embedder"] = {"name": "fake/hashing", "options": {"dim": 32}}
    retriever = dense(context, **options)
    retriever.index(chunks)
    assert retriever.stats["cache"] == "built" and HashingEmbedder.calls == [6, 6]
    assert len(entries(context)) == 2


def test_key_is_order_and_content_sensitive():
    chunks = make_chunks()
    ident = {"embedder": "x"}
    assert embeddings_key(chunks, ident) == embeddings_key(make_chunks(), ident)
    assert embeddings_key(chunks[::-1], ident) != embeddings_key(chunks, ident)
    assert embeddings_key(chunks, {"embedder": "y"}) != embeddings_key(chunks, ident)
    assert index_key("k", {"index": "hnsw", "m": 16}) != index_key("k", {"index": "hnsw", "m": 32})


@pytest.mark.parametrize("damage", ["flip_byte", "truncate", "drop_vectors", "bad_manifest", "other_key"])
def test_corrupted_or_partial_entry_is_rebuilt_never_used(context, damage, caplog):
    dense(context).index(make_chunks())
    folder = context.cache_dir / "dense" / entries(context)[0]
    vectors, manifest = folder / "vectors.npy", folder / "manifest.json"
    if damage == "flip_byte":
        data = bytearray(vectors.read_bytes())
        data[-5] ^= 0xFF
        vectors.write_bytes(bytes(data))
    elif damage == "truncate":
        vectors.write_bytes(vectors.read_bytes()[:100])
    elif damage == "drop_vectors":
        vectors.unlink()
    elif damage == "bad_manifest":
        manifest.write_text('{"format": 1, "key": ')
    else:
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "key": "0" * 64}))
    with caplog.at_level(logging.WARNING, logger="ragassay.dense"):
        retriever = dense(context)
        retriever.index(make_chunks())
    assert retriever.stats["cache"].startswith("rebuilt") and HashingEmbedder.calls == [6, 6]
    assert "unusable" in caplog.text and "rebuilding" in caplog.text
    healed = dense(context)
    healed.index(make_chunks())
    assert healed.stats["cache"] == "hit" and HashingEmbedder.calls == [6, 6]


def test_cached_vectors_of_another_dimension_are_rebuilt(context):
    chunks = make_chunks()
    retriever = dense(context)
    key = embeddings_key(chunks, identity(retriever.embedder))
    DenseCache(context.cache_dir / "dense").save_vectors(key, np.ones((6, 8), np.float32), {})  # a stale entry
    retriever.embedder.dimension = 64  # this embedder can tell its size without embedding
    retriever.index(chunks)
    assert retriever.stats["cache"] == "rebuilt: cached vectors have dimension 8, the embedder gives 64"
    assert HashingEmbedder.calls == [6] and retriever.retrieve("stars", 1)[0].chunk.id in {"d2#0", "d5#0"}


def test_dimension_mismatch_found_at_query_time_rebuilds(context, caplog):
    chunks = make_chunks()
    retriever = dense(context)
    key = embeddings_key(chunks, identity(retriever.embedder))
    DenseCache(context.cache_dir / "dense").save_vectors(key, np.eye(6, 8, dtype=np.float32), {})
    retriever.index(chunks)  # the embedder cannot tell its size: the stale 8-d entry is loaded
    assert retriever.stats["cache"] == "hit" and HashingEmbedder.calls == []
    with caplog.at_level(logging.WARNING, logger="ragassay.dense"):
        hits = retriever.retrieve("honey bees", 2)
    assert "re-embedding the 6 chunks" in caplog.text and HashingEmbedder.calls == [1, 6]
    assert {h.chunk.id for h in hits} == {"d1#0", "d4#0"}
    fresh = dense(context)
    fresh.index(chunks)  # the cache now holds the right vectors
    assert fresh.stats["cache"] == "hit" and fresh.retrieve("honey bees", 1)[0].chunk.id in {"d1#0", "d4#0"}


def test_query_and_chunk_dimensions_that_disagree_are_a_provider_error(context):
    retriever = dense(context, embedder={"name": "fake/hashing", "options": {"query_dim": 16}})
    retriever.index(make_chunks())
    with pytest.raises(ProviderError, match="16-dimensional query vectors but 64-dimensional chunk vectors"):
        retriever.retrieve("stars", 2)


def test_hnsw_index_is_cached_and_search_parameters_need_no_rebuild(context):
    retriever = dense(context, index="hnsw", hnsw_m=8)
    retriever.index(make_chunks())
    assert retriever.stats["index_cache"] == "built"
    folder = context.cache_dir / "dense" / entries(context)[0]
    assert len(list(folder.glob("index-*.faiss"))) == 1
    again = dense(context, index="hnsw", hnsw_m=8, ef_search=16)
    again.index(make_chunks())
    assert again.stats["index_cache"] == "hit" and again.stats["cache"] == "hit"
    other = dense(context, index="hnsw", hnsw_m=16)  # a build parameter: a second index, same embeddings
    other.index(make_chunks())
    assert other.stats["index_cache"] == "built" and other.stats["cache"] == "hit"
    assert len(list(folder.glob("index-*.faiss"))) == 2 and HashingEmbedder.calls == [6]


def test_corrupted_index_file_is_rebuilt(context):
    dense(context, index="ivf", ivf_nlist=2).index(make_chunks())
    folder = context.cache_dir / "dense" / entries(context)[0]
    index_file = next(folder.glob("index-*.faiss"))
    index_file.write_bytes(index_file.read_bytes()[:50])
    retriever = dense(context, index="ivf", ivf_nlist=2)
    retriever.index(make_chunks())
    assert retriever.stats["index_cache"] == "built" and retriever.stats["cache"] == "hit"
    assert retriever.retrieve("Bees make honey from flower nectar", 1)[0].chunk.id == "d1#0"


def test_cache_off_writes_nothing_and_always_embeds(context):
    for _ in range(2):
        dense(context, cache=False).index(make_chunks())
    assert HashingEmbedder.calls == [6, 6] and not (context.cache_dir / "dense").exists()


def test_cache_dir_option_and_atomic_writes(context):
    retriever = dense(context, cache_dir="shared-cache")
    retriever.index(make_chunks())
    folder = context.project_dir / "shared-cache"
    files = sorted(p.name for p in next(folder.iterdir()).iterdir())
    assert files == ["manifest.json", "vectors.npy"]  # no temporary files left behind
    manifest = json.loads((next(folder.iterdir()) / "manifest.json").read_text())
    embedder = manifest["material"]["embedder"]
    assert manifest["count"] == 6 and manifest["dim"] == 64
    assert embedder["embedder"] == "hashing" and embedder["class"].endswith("HashingEmbedder")


def test_load_vectors_reports_shape_mismatch(tmp_path):
    cache = DenseCache(tmp_path)
    cache.save_vectors("k", np.ones((3, 4), np.float32), {})
    assert cache.load_vectors("k", 3).shape == (3, 4)
    with pytest.raises(CacheMiss, match=r"manifest and corpus say \(5, 4\)"):
        cache.load_vectors("k", 5)
    with pytest.raises(CacheMiss, match="absent"):
        cache.load_vectors("other", 3)
    chunk = Chunk(id="a", document_id="a", text="t")
    assert embeddings_key([chunk], {}) != embeddings_key([chunk.model_copy(update={"text": "u"})], {})
