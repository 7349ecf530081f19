"""The ``hybrid`` retriever: reciprocal rank fusion of two or more retrievers, then an optional rerank step.

Every configured retriever indexes the same chunks and returns its top ``candidates`` for a query; a chunk's
fused score is ``Σ_r w_r / (rrf_k + rank_r)`` over the retrievers that returned it (Cormack, Clarke &
Büttcher 2009, "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning Methods", SIGIR;
k = 60 there). Equal fused scores keep index order.

Rerank step: ``reranker`` names a registered :class:`ragassay.Reranker` (``register_rerankers``; ragassay
ships ``overlap``). The fused top ``rerank_candidates`` go to its ``rerank(query, candidates, k)``; its order
is final.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragassay import (
    Chunk,
    ComponentContext,
    DatasetError,
    Reranker,
    RerankerRef,
    Retriever,
    RetrieverRef,
    ScoredChunk,
    hookimpl,
)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], k: float = 60, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Fused score of every id: ``Σ_r w_r / (k + rank_r(id))`` over the rankings that contain it."""
    weights = weights or [1.0] * len(rankings)
    fused: dict[str, float] = {}
    for weight, ranking in zip(weights, rankings):
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


class HybridOptions(BaseModel):
    """Options of the hybrid retriever."""

    model_config = ConfigDict(extra="forbid")

    retrievers: list[RetrieverRef] = Field(
        default_factory=lambda: [RetrieverRef(name="bm25"), RetrieverRef(name="dense")],
        min_length=2,
        description="Retrievers to fuse (two or more): names or {name = ..., options = {...}}.",
    )
    rrf_k: float = Field(60, ge=0, description="RRF constant k in 1 / (k + rank) (Cormack et al. 2009: 60).")
    weights: list[float] | None = Field(None, description="Weight of each retriever's 1 / (k + rank) (default 1).")
    candidates: int = Field(50, ge=1, description="Chunks asked from each retriever (at least k are asked).")
    reranker: RerankerRef | None = Field(
        None,
        description="A registered reranker (e.g. 'overlap', or a cross-encoder plugin) that reorders the "
        "fused candidates; None: no rerank step.",
    )
    rerank_candidates: int = Field(20, ge=1, description="Fused candidates passed to the reranker (at least k).")

    @model_validator(mode="after")
    def _consistent(self) -> HybridOptions:
        if self.weights is not None and len(self.weights) != len(self.retrievers):
            raise ValueError(f"weights has {len(self.weights)} values for {len(self.retrievers)} retrievers")
        return self


class HybridRetriever(Retriever):
    """Fuses two or more retrievers by reciprocal rank fusion, with an optional rerank step."""

    name = "hybrid"
    Options = HybridOptions

    def __init__(self, options=None, *, context: ComponentContext | None = None):
        super().__init__(options, context=context)
        self._parts: list[tuple[str, Retriever]] | None = None
        self._reranker: Reranker | None = None

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Build every configured retriever (and the reranker) and index ``chunks`` in each."""
        chunks = list(chunks)
        if not chunks:
            raise DatasetError("hybrid retriever: the corpus has no chunks to index")
        refs = self.options.retrievers
        names = [ref.name for ref in refs]
        labels = [n if names.count(n) == 1 else f"{i}:{n}" for i, n in enumerate(names)]
        self._parts = [(label, self.context.build(ref)) for label, ref in zip(labels, refs)]
        for _, part in self._parts:
            part.index(chunks)
        self._positions = {chunk.id: i for i, chunk in enumerate(chunks)}
        reranker = self.options.reranker
        self._reranker = self.context.build(reranker) if reranker is not None else None

    def retrieve(self, query: str, k: int) -> list[ScoredChunk]:
        """The ``k`` best chunks by fused score (after the rerank step, when configured)."""
        return self.retrieve_traced(query, k)[0]

    def retrieve_traced(self, query: str, k: int) -> tuple[list[ScoredChunk], dict[str, Any]]:
        """The fused hits and a trace: each returned chunk's rank in each retriever, and each part's trace."""
        if self._check_ready(k):
            return [], {}
        depth = max(self.options.candidates, k)
        return self._fuse(query, k, {label: part.retrieve_traced(query, depth) for label, part in self._parts})

    async def aretrieve(self, query: str, k: int) -> list[ScoredChunk]:
        """Asynchronous :meth:`retrieve` (see :meth:`aretrieve_traced`)."""
        return (await self.aretrieve_traced(query, k))[0]

    async def aretrieve_traced(self, query: str, k: int) -> tuple[list[ScoredChunk], dict[str, Any]]:
        """:meth:`retrieve_traced` with the parts asked concurrently through their asynchronous path (a dense
        part shares the query's embedding with the run's other dense retrievers of the same embedder)."""
        if self._check_ready(k):
            return [], {}
        depth = max(self.options.candidates, k)
        answers = await asyncio.gather(*(part.aretrieve_traced(query, depth) for _, part in self._parts))
        return self._fuse(query, k, {label: answer for (label, _), answer in zip(self._parts, answers)})

    def _check_ready(self, k: int) -> bool:
        """Raises before :meth:`index`; True when ``k`` asks for nothing."""
        if self._parts is None:
            raise RuntimeError("HybridRetriever.retrieve() called before index(); index the chunks first")
        return k <= 0

    def _fuse(
        self, query: str, k: int, traced: dict[str, tuple[list[ScoredChunk], dict[str, Any]]]
    ) -> tuple[list[ScoredChunk], dict[str, Any]]:
        """The fused (and reranked) top ``k`` of the parts' hits, with the trace."""
        results = {label: hits for label, (hits, _) in traced.items()}
        chunks = {hit.chunk.id: hit.chunk for hits in results.values() for hit in hits}
        fused = reciprocal_rank_fusion(
            [[hit.chunk.id for hit in hits] for hits in results.values()], self.options.rrf_k, self.options.weights
        )
        order = sorted(fused, key=lambda cid: (-fused[cid], self._positions.get(cid, len(self._positions))))
        hits = [ScoredChunk(chunk=chunks[cid], score=fused[cid], rank=rank) for rank, cid in enumerate(order, 1)]
        if self._reranker is not None:
            pool = hits[: max(self.options.rerank_candidates, k)]
            hits = self._reranker.rerank(query, pool, k)
        hits = [ScoredChunk(chunk=h.chunk, score=h.score, rank=rank) for rank, h in enumerate(hits[:k], start=1)]
        return hits, self._trace(results, {label: trace for label, (_, trace) in traced.items() if trace}, hits)

    def _trace(
        self, results: dict[str, list[ScoredChunk]], parts: dict[str, dict[str, Any]], hits: list[ScoredChunk]
    ) -> dict[str, Any]:
        ranks = {label: {h.chunk.id: h.rank for h in part_hits} for label, part_hits in results.items()}
        return {
            "fusion": "rrf",
            "rrf_k": self.options.rrf_k,
            "reranked": self._reranker is not None,
            "ranks": {
                h.chunk.id: {label: r[h.chunk.id] for label, r in ranks.items() if h.chunk.id in r} for h in hits
            },
            "retrievers": parts,
        }


@hookimpl
def register_retrievers(register):
    """Register the hybrid retriever."""
    register(HybridRetriever)
