"""Query vectors of one embedder in one run: each text embedded once, concurrent requests in one forward pass.

:func:`query_encoder` returns the run's :class:`QueryEncoder` for an embedder, keyed by the embedder's identity
(name, class, what decides its vectors) in the run's shared objects (:meth:`ragassay.ComponentContext.shared`):
the ``dense`` retriever of one system, ``hybrid``'s dense part and a second system with the same embedder ask
the same encoder, so a question is embedded once per run. Its vectors are kept in a bounded LRU cache
(``cache_size`` texts); a text asked while it is being embedded waits for that result.

The asynchronous path micro-batches (:class:`~ragassay.plugins.dense.batching.MicroBatcher`): the questions of
units running concurrently are embedded together by ``Embedder.encode_queries`` in a worker thread. That method
gives each text the same vector whatever its batch (the ``local`` embedder pads every query to a fixed bucket
of its own length), so the batch a question falls in, which depends on timing, does not change its ranking.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragassay import ComponentContext, Embedder

from .batching import MicroBatcher
from .embedding import encode, identity

if TYPE_CHECKING:
    import numpy as np

#: Texts whose vectors a run keeps per embedder (a 384-dimension vector is 1.5 kB: 10,000 are 15 MB).
CACHE_SIZE = 10_000
#: Texts waiting or running per embedder before a caller waits for room.
MAX_PENDING = 1024
#: How long the batcher waits for concurrent callers to join a batch.
WINDOW_S = 0.002


@dataclasses.dataclass(frozen=True)
class QueryVector:
    """The raw embedder vector of one query (read-only, float32) and what the embedder saw of it."""

    vector: np.ndarray
    tokens: int | None
    truncated: bool
    max_tokens: int | None


class QueryEncoder:
    """Query vectors of ``embedder``: cached per text (bounded), batched across concurrent callers.

    ``calls`` counts the embedder calls made for queries and ``texts_encoded`` the texts they embedded.
    """

    def __init__(self, embedder: Embedder, *, cache_size: int = CACHE_SIZE, max_batch: int | None = None):
        self.embedder = embedder
        self.cache_size = max(1, cache_size)
        self.calls = 0
        self.texts_encoded = 0
        self._cache: OrderedDict[str, QueryVector] = OrderedDict()
        self._lock = threading.Lock()
        size = max_batch or getattr(embedder.options, "batch_size", None) or 32
        self.batcher = MicroBatcher(self._encode_batch, max_batch=size, window_s=WINDOW_S, max_pending=MAX_PENDING)

    def cached(self, text: str) -> QueryVector | None:
        """The vector of ``text`` when this run has embedded it (and it is still in the cache)."""
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
            return hit

    def encode(self, text: str) -> QueryVector:
        """The vector of ``text``, embedded in this thread when not cached (the synchronous path)."""
        hit = self.cached(text)
        return hit if hit is not None else self._encode_batch([text])[0]

    async def aencode(self, text: str) -> QueryVector:
        """The vector of ``text``; when not cached, embedded with the texts other callers ask meanwhile."""
        hit = self.cached(text)
        return hit if hit is not None else await self.batcher.submit(text)

    def _encode_batch(self, texts: Sequence[str]) -> list[QueryVector]:
        """Embed ``texts`` in one embedder call (in a worker thread on the async path) and cache them."""
        encoded = encode(self.embedder, texts, queries=True)
        results = []
        for row in range(len(texts)):
            vector = encoded.vectors[row].copy()
            vector.flags.writeable = False
            results.append(QueryVector(vector, encoded.tokens[row], bool(encoded.truncated[row]), encoded.max_tokens))
        with self._lock:
            self.calls += 1
            self.texts_encoded += len(texts)
            for text, result in zip(texts, results):
                self._cache[text] = result
                self._cache.move_to_end(text)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return results


def query_encoder(context: ComponentContext, embedder: Embedder) -> QueryEncoder:
    """The run's query encoder for ``embedder`` (one per embedder identity; made on first use)."""
    key = ("ragassay.dense.queries", json.dumps(identity(embedder), sort_keys=True, default=str))
    return context.shared(key, lambda: QueryEncoder(embedder))


def encoder_stats(encoder: QueryEncoder) -> dict[str, Any]:
    """Counts of one encoder, for benchmarks and tests: embedder calls, texts embedded, batches run."""
    return {"calls": encoder.calls, "texts": encoder.texts_encoded, "batches": encoder.batcher.batches_run}
