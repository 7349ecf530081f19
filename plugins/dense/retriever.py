"""The ``dense`` retriever: embed the chunks, index them with FAISS, rank by cosine similarity.

The chunk embeddings and built HNSW/IVF indexes persist in ``<cache_dir>/dense`` (see
:mod:`ragassay.plugins.dense.cache`), so a re-run or another system with the same chunks and embedder
re-uses them without embedding anything. :meth:`DenseRetriever.retrieve_traced` also tells how the query
was embedded: its token count and whether it was truncated.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ragassay import (
    Chunk,
    ComponentContext,
    DatasetError,
    EmbedderRef,
    Encoded,
    ProviderError,
    Retriever,
    ScoredChunk,
    require,
)

from . import faiss_index
from .cache import CacheMiss, DenseCache, embeddings_key, index_key
from .embedding import dimension, encode, identity, l2_normalize
from .faiss_index import IndexOptions
from .queries import QueryEncoder, QueryVector, query_encoder

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("ragassay.dense")

#: Scores are rounded to this many decimals before ordering (equal scores: chunk order), as they are stored.
SCORE_DECIMALS = 6
#: Chunks embedded per embedder call while indexing: progress is reported after each block.
EMBED_BLOCK = 64
#: From this share of truncated chunks on, truncation is a run warning (below it, an INFO log line).
TRUNCATION_WARN_SHARE = 0.05
EMBEDDING_PHASE = "corpus embedding"
#: Loading the embedder's model (a local one) is a phase of its own, reported before the corpus embedding starts
#: counting chunks: inside it, the load time read as the first block's and the rate as the load time.
MODEL_PHASE = "embedding model load"


class DenseOptions(IndexOptions):
    """Options of the dense retriever (index options included)."""

    embedder: EmbedderRef = Field(
        EmbedderRef(name="local"), description="Embedder: a name ('local', 'openai') or {name = ..., options = {...}}."
    )
    similarity: Literal["cosine", "inner_product"] = Field(
        "cosine", description="'cosine': L2-normalise vectors, then inner product; 'inner_product': raw vectors."
    )
    cache: bool = Field(True, description="Keep embeddings and built indexes on disk and re-use them.")
    cache_dir: str | None = Field(
        None, description="Cache folder (relative to the project); None: <project cache_dir>/dense."
    )


class DenseRetriever(Retriever):
    """Ranks chunks by embedding similarity (FAISS flat, HNSW or IVF), embeddings cached on disk."""

    name = "dense"
    Options = DenseOptions

    def __init__(self, options=None, *, context: ComponentContext | None = None):
        super().__init__(options, context=context)
        self._lock = threading.Lock()
        self._warmed = False
        self._chunks: list[Chunk] | None = None
        self._index = None
        self.stats: dict[str, Any] = {}

    @property
    def embedder(self):
        """The embedder component (built on first use from the ``embedder`` option)."""
        if getattr(self, "_embedder", None) is None:
            self._embedder = self.context.build(self.options.embedder)
        return self._embedder

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Embed (or load from the cache) and index ``chunks``; empty chunks are skipped and counted."""
        chunks = list(chunks)
        if not chunks:
            raise DatasetError(
                "dense retriever: the corpus has no chunks to index; check the [corpus] paths or "
                "source and that the documents are not empty"
            )
        kept = [chunk for chunk in chunks if chunk.text.strip()]
        if not kept:
            raise DatasetError(f"dense retriever: all {len(chunks)} chunks are empty; nothing can be embedded")
        if len(kept) < len(chunks):
            log.warning("dense retriever: skipped %d empty chunk(s) out of %d", len(chunks) - len(kept), len(chunks))
        started = time.perf_counter()
        self._chunks = kept
        self._key = embeddings_key(kept, identity(self.embedder))
        self.stats = {"chunks": len(kept), "skipped_empty": len(chunks) - len(kept), "key": self._key}
        vectors = self._vectors()
        self._index = self._build_index(vectors)
        self._warm()  # a cached index loads no model: load it now, not inside the first unit's latency
        self.stats["ready_s"] = time.perf_counter() - started

    def retrieve(self, query: str, k: int) -> list[ScoredChunk]:
        """The ``k`` chunks most similar to ``query``, best first (equal scores: earlier chunk first)."""
        return self.retrieve_traced(query, k)[0]

    def retrieve_traced(self, query: str, k: int) -> tuple[list[ScoredChunk], dict[str, Any]]:
        """The hits and how the query was embedded (tokens, truncation) and whether the vectors were cached."""
        self._check_ready()
        if k <= 0:
            return [], {}
        return self._search(self.queries.encode(query), k)

    async def aretrieve(self, query: str, k: int) -> list[ScoredChunk]:
        """Asynchronous :meth:`retrieve` (see :meth:`aretrieve_traced`)."""
        return (await self.aretrieve_traced(query, k))[0]

    async def aretrieve_traced(self, query: str, k: int) -> tuple[list[ScoredChunk], dict[str, Any]]:
        """:meth:`retrieve_traced` with the query embedded off the event loop, in one forward pass with the
        queries of concurrent units, or taken from this run's query cache (shared with ``hybrid``)."""
        self._check_ready()
        if k <= 0:
            return [], {}
        return self._search(await self.queries.aencode(query), k)

    @property
    def queries(self) -> QueryEncoder:
        """This run's query encoder for the embedder (shared with every retriever using the same embedder)."""
        if getattr(self, "_queries", None) is None:
            self._queries = query_encoder(self.context, self.embedder)
        return self._queries

    def _check_ready(self) -> None:
        if self._index is None:
            raise RuntimeError("DenseRetriever.retrieve() called before index(); index the chunks first")

    def _search(self, query: QueryVector, k: int) -> tuple[list[ScoredChunk], dict[str, Any]]:
        """The ``k`` best chunks for a query vector: scores rounded to ``SCORE_DECIMALS`` before ordering,
        equal scores in chunk order, so the ranking cannot hinge on float noise of the last bits."""
        trace = {
            "query_tokens": query.tokens,
            "query_truncated": query.truncated,
            "max_query_tokens": query.max_tokens,
            "cache": self.stats.get("cache"),
        }
        query_vectors = self._prepare(query.vector.reshape(1, -1))
        with self._lock:  # a rebuild swaps the index; searches in flight keep the one they started with
            if query_vectors.shape[1] != self._index.d:
                self._rebuild_for_dimension(query_vectors.shape[1])
            index = self._index
        scores, rows = faiss_index.search(index, query_vectors, min(k, len(self._chunks)), self.options)
        found = sorted(
            ((round(float(s), SCORE_DECIMALS), int(r)) for s, r in zip(scores[0], rows[0]) if r >= 0),
            key=lambda x: (-x[0], x[1]),
        )
        return [
            ScoredChunk(chunk=self._chunks[row], score=score, rank=rank)
            for rank, (score, row) in enumerate(found, start=1)
        ], trace

    # -- embeddings ----------------------------------------------------------------------------

    def _cache(self) -> DenseCache | None:
        if not self.options.cache:
            return None
        folder = self.context.resolve(self.options.cache_dir) if self.options.cache_dir else None
        return DenseCache(folder or Path(self.context.cache_dir) / "dense")

    def _vectors(self) -> np.ndarray:
        """The chunk embeddings: from the cache when a verified entry exists, else embedded and stored."""
        cache = self._cache()
        if cache is not None:
            try:
                vectors = cache.load_vectors(self._key, len(self._chunks))
                expected = dimension(self.embedder)
                if expected and expected != vectors.shape[1]:
                    raise CacheMiss(f"cached vectors have dimension {vectors.shape[1]}, the embedder gives {expected}")
                self.stats["cache"] = "hit"
                self.context.progress(EMBEDDING_PHASE, len(vectors), len(vectors), "chunks", note="cache hit")
                return vectors
            except CacheMiss as miss:
                if str(miss) != "absent":
                    log.warning("dense cache %s unusable: %s; rebuilding", cache.entry(self._key), miss)
                self.stats["cache"] = "built" if str(miss) == "absent" else f"rebuilt: {miss}"
        else:
            self.stats["cache"] = "off"
        return self._embed_chunks(cache)

    def _warm(self) -> None:
        """Load the embedder's model once (:meth:`ragassay.Embedder.warm`), reported as the phase
        ``embedding model load`` (shown when it lasts a second or more)."""
        if self._warmed:
            return
        self.context.progress(MODEL_PHASE, 0, 1, "model")
        self.embedder.warm()
        self.context.progress(MODEL_PHASE, 1, 1, "model")
        self._warmed = True

    def _embed_chunks(self, cache: DenseCache | None) -> np.ndarray:
        self._warm()  # before the embedding counts chunks: the model's load is not the first block's time
        started = time.perf_counter()
        encoded = self._encode_reporting([chunk.text for chunk in self._chunks])
        self.stats.update(embed_s=time.perf_counter() - started, truncated_chunks=encoded.truncated_count)
        self._report_truncation(encoded)
        if cache is not None:
            material = {"chunks": len(self._chunks), "embedder": identity(self.embedder)}
            cache.save_vectors(self._key, encoded.vectors, material)
        return encoded.vectors

    def _encode_reporting(self, texts: list[str]) -> Encoded:
        """Embed ``texts`` ``EMBED_BLOCK`` at a time, reporting the phase ``corpus embedding`` after each block."""
        np = require("numpy", "dense")
        total, blocks = len(texts), []
        self.context.progress(EMBEDDING_PHASE, 0, total, "chunks")
        for start in range(0, total, EMBED_BLOCK):
            blocks.append(encode(self.embedder, texts[start : start + EMBED_BLOCK]))
            self.context.progress(EMBEDDING_PHASE, min(start + EMBED_BLOCK, total), total, "chunks")
        return Encoded(
            np.concatenate([b.vectors for b in blocks]),
            [t for b in blocks for t in b.tokens],
            [t for b in blocks for t in b.truncated],
            blocks[0].max_tokens,
        )

    def _report_truncation(self, encoded: Encoded) -> None:
        """Truncated chunks: a run warning from ``TRUNCATION_WARN_SHARE`` of the chunks on, else logged."""
        count, total = encoded.truncated_count, len(encoded.truncated)
        if not count:
            return
        share = count / total
        if share < TRUNCATION_WARN_SHARE:
            log.info(
                "dense retriever: %d chunk(s) (%.1f%%) longer than %s tokens were truncated by the embedder",
                count,
                100 * share,
                encoded.max_tokens,
            )
            return
        self.context.warn(
            f"dense retriever ({self.embedder.name} embedder): {count:,} of {total:,} chunks ({share:.0%}) are "
            f"longer than its {encoded.max_tokens}-token limit and were truncated: their ends cannot be found. "
            'Use smaller chunks (the recursive chunker with unit = "tokens" and a size well below the '
            "limit, as the embedder's tokenizer counts more tokens than words) or an embedder with a longer limit"
        )

    def _prepare(self, vectors: np.ndarray) -> np.ndarray:
        return l2_normalize(vectors) if self.options.similarity == "cosine" else vectors

    # -- index ---------------------------------------------------------------------------------

    def _build_index(self, vectors: np.ndarray):
        """The FAISS index over ``vectors``; HNSW and IVF indexes are loaded from / saved to the cache."""
        vectors = self._prepare(vectors)
        opts = self.options
        if opts.index == "flat":
            return faiss_index.build(vectors, opts)
        params = {**opts.build_params(len(vectors)), "similarity": opts.similarity}
        ikey, cache = index_key(self._key, params), self._cache()
        if cache is not None:
            try:
                index = faiss_index.deserialize(cache.load_index(self._key, ikey))
                if (index.ntotal, index.d) != vectors.shape:
                    raise CacheMiss(f"index holds {index.ntotal}x{index.d} vectors, expected {vectors.shape}")
                self.stats["index_cache"] = "hit"
                self.context.progress(f"{opts.index} index", index.ntotal, index.ntotal, "vectors", note="cache hit")
                return index
            except (CacheMiss, RuntimeError) as miss:
                if str(miss) != "absent":
                    log.warning("dense cache index %s unusable: %s; rebuilding", ikey, miss)
        started = time.perf_counter()
        self.context.progress(f"{opts.index} index", 0, len(vectors), "vectors")
        index = faiss_index.build(vectors, opts)
        self.context.progress(f"{opts.index} index", len(vectors), len(vectors), "vectors")
        self.stats.update(index_cache="built", index_build_s=time.perf_counter() - started)
        if cache is not None:
            cache.save_index(self._key, ikey, faiss_index.serialize(index), params)
        return index

    def _rebuild_for_dimension(self, query_dim: int) -> None:
        """The embedder's vectors no longer match the index: re-embed the chunks, rebuild, re-cache."""
        log.warning(
            "dense retriever: queries embed to %d dimensions but the index holds %d; re-embedding the %d chunks",
            query_dim,
            self._index.d,
            len(self._chunks),
        )
        vectors = self._embed_chunks(self._cache())
        self.stats["cache"] = f"rebuilt: dimension {self._index.d} -> {vectors.shape[1]}"
        self._index = self._build_index(vectors)
        if self._index.d != query_dim:
            raise ProviderError(
                f"embedder '{self.embedder.name}' gives {query_dim}-dimensional query vectors but "
                f"{self._index.d}-dimensional chunk vectors"
            )
