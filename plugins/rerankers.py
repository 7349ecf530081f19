"""The ``overlap`` reranker: reorders candidates by the share of query words each one contains.

A candidate's score is ``|W(q) ∩ W(c)| / |W(q)|``, the fraction of the query's distinct words (stop words
dropped by default) that occur in the candidate: the keyword-matching criterion of GRAMMAR (``seeds/000``,
section 2, "documents that share the highest number of common words"), normalised by the query's word count.
Equal scores keep the candidates' incoming order, so the reranker is deterministic and cheap; it makes the
reranker kind usable without a model, and is a baseline for cross-encoder rerankers.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Reranker, ScoredChunk, hookimpl, words


class OverlapOptions(BaseModel):
    """Options of the overlap reranker."""

    model_config = ConfigDict(extra="forbid")

    drop_stopwords: bool = Field(True, description="Ignore English stop words in the query and the candidates.")


class OverlapReranker(Reranker):
    """Reorders candidates by the fraction of distinct query words they contain (ties keep incoming order)."""

    name = "overlap"
    Options = OverlapOptions

    def rerank(self, query: str, candidates: list[ScoredChunk], k: int) -> list[ScoredChunk]:
        """The ``k`` candidates sharing the most query words, best first, ranks 1..n."""
        wanted = set(words(query, drop_stopwords=self.options.drop_stopwords))
        if k <= 0:
            return []
        scores = [self._score(wanted, hit.chunk.text) for hit in candidates]
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))[:k]
        return [
            ScoredChunk(chunk=candidates[i].chunk, score=scores[i], rank=rank) for rank, i in enumerate(order, start=1)
        ]

    def _score(self, wanted: set[str], text: str) -> float:
        if not wanted:
            return 0.0
        return len(wanted & set(words(text, drop_stopwords=self.options.drop_stopwords))) / len(wanted)


@hookimpl
def register_rerankers(register):
    """Register the overlap reranker."""
    register(OverlapReranker)
