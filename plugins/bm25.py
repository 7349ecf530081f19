"""The ``bm25`` retriever: Okapi BM25 (Robertson et al.) as implemented by the ``rank_bm25`` package.

Chunks and queries are tokenised by :func:`ragassay.text.words`. ``rank_bm25.BM25Okapi`` replaces the
negative IDF of terms found in more than half the chunks by ``epsilon`` times the average IDF.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Chunk, DatasetError, MissingDependencyError, Retriever, ScoredChunk, hookimpl, words

if TYPE_CHECKING:  # numpy is imported on first use
    import numpy as np


class BM25Retriever(Retriever):
    """Ranks chunks by Okapi BM25 (rank_bm25.BM25Okapi) over lower-cased word tokens."""

    name = "bm25"

    class Options(BaseModel):
        """Options of the BM25 retriever."""

        model_config = ConfigDict(extra="forbid")

        k1: float = Field(1.5, ge=0, description="Term-frequency saturation: higher lets repeated terms count more.")
        b: float = Field(0.75, ge=0, le=1, description="Length normalisation: 0 none, 1 full.")
        epsilon: float = Field(
            0.25, ge=0, description="Floor for the IDF of very common terms, as a fraction of the average IDF."
        )
        drop_stopwords: bool = Field(True, description="Ignore English stop words in chunks and queries.")

    _chunks: list[Chunk] | None = None

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Build the BM25 index over ``chunks``; raises :class:`DatasetError` when there are none."""
        chunks = list(chunks)
        if not chunks:
            raise DatasetError(
                "bm25 retriever: the corpus has no chunks to index; check the [corpus] paths or source "
                "and that the documents are not empty"
            )
        bm25_module = _import_rank_bm25()
        corpus = [self._words(chunk.text) for chunk in chunks]
        self._postings = _postings(corpus)
        opts = self.options
        # rank_bm25 divides by the vocabulary size and average length: skip it when no chunk has a term
        self._bm25 = None
        if self._postings:
            self._bm25 = bm25_module.BM25Okapi(corpus, k1=opts.k1, b=opts.b, epsilon=opts.epsilon)
        self._chunks = chunks

    def retrieve(self, query: str, k: int) -> list[ScoredChunk]:
        """Return up to ``k`` chunks sharing at least one term with ``query``, best first.

        Equal scores are ordered by index position (the chunk given earlier to :meth:`index` first).
        """
        positions, scores = self.scores(query)
        return [
            ScoredChunk(chunk=self._chunks[positions[i]], score=float(scores[i]), rank=rank)
            for rank, i in enumerate(_top_k(positions, scores, k), start=1)
        ]

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """BM25 scores of the chunks containing a term of ``query``: (ascending positions, scores).

        Matching is decided by term presence, not by the score: BM25 can score a matching chunk 0 (or
        below, via rank_bm25's IDF floor), and every other chunk scores exactly 0.
        """
        if self._chunks is None:
            raise RuntimeError("BM25Retriever.retrieve() called before index(); index the chunks first")
        import numpy as np

        terms = self._words(query)
        hits = [self._postings[term] for term in set(terms) if term in self._postings]
        if not hits:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        positions = np.unique(np.concatenate(hits))
        scores = self._bm25.get_batch_scores(terms, positions.tolist())
        return positions, np.asarray(scores, dtype=np.float64)

    def _words(self, text: str) -> list[str]:
        return words(text, drop_stopwords=self.options.drop_stopwords)


def _import_rank_bm25():
    try:
        import rank_bm25
    except ImportError as exc:  # pragma: no cover - it is a dependency of ragassay
        raise MissingDependencyError(
            f"the bm25 retriever needs rank_bm25 ({exc}). Install it with: pip install rank-bm25"
        ) from exc
    return rank_bm25


def _postings(corpus: list[list[str]]) -> dict[str, np.ndarray]:
    """Inverted index of a tokenised corpus: term -> ascending positions of the chunks containing it."""
    import numpy as np

    postings: dict[str, list[int]] = {}
    for position, tokens in enumerate(corpus):
        for term in set(tokens):
            postings.setdefault(term, []).append(position)
    return {term: np.asarray(positions, dtype=np.int64) for term, positions in postings.items()}


def _top_k(positions: np.ndarray, scores: np.ndarray, k: int) -> list[int]:
    """Indices into ``positions`` of the ``k`` best scores, best first; equal scores: lower position first."""
    import numpy as np

    if k <= 0 or scores.size == 0:
        return []
    keep = np.arange(scores.size)
    if scores.size > k:  # argpartition picks arbitrarily among ties: keep all tied with the k-th best
        kth_best = scores[np.argpartition(-scores, k - 1)[k - 1]]
        keep = np.flatnonzero(scores >= kth_best)
    order = np.lexsort((positions[keep], -scores[keep]))  # score descending, then position
    return keep[order][:k].tolist()


@hookimpl
def register_retrievers(register):
    """Register the BM25 retriever."""
    register(BM25Retriever)
