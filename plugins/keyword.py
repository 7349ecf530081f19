"""The ``keyword`` retriever: keyword matching as described by GRAMMAR (``../shared/seeds/000``, section 2).

"Keyword-matching approaches select documents that share the highest number of common words." A chunk's
score is the number of distinct query words that also occur in it (or, with ``count = "occurrences"``, how
often those shared words occur in the chunk). Words come from :func:`ragassay.text.words`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Chunk, Retriever, ScoredChunk, hookimpl, words

if TYPE_CHECKING:  # numpy is imported on first use
    import numpy as np


class KeywordRetriever(Retriever):
    """Ranks chunks by the number of words they share with the query (GRAMMAR keyword matching)."""

    name = "keyword"

    class Options(BaseModel):
        """Options of the keyword retriever."""

        model_config = ConfigDict(extra="forbid")

        drop_stopwords: bool = Field(
            False, description="Ignore English stop words; the paper's keyword matching counts all words."
        )
        count: Literal["distinct", "occurrences"] = Field(
            "distinct",
            description="'distinct': number of distinct query words in the chunk; "
            "'occurrences': total occurrences in the chunk of the shared words.",
        )

    _chunks: list[Chunk] | None = None

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Build the inverted index: word -> (chunk positions, term frequencies), as slices of two numpy arrays
        grouped by word (positions ascending within a word)."""
        import numpy as np

        chunks = list(chunks)
        vocabulary: dict[str, int] = {}
        word_ids: list[int] = []
        tfs: list[int] = []
        lengths: list[int] = []
        for chunk in chunks:
            counts = Counter(self._words(chunk.text))
            word_ids += [vocabulary.setdefault(word, len(vocabulary)) for word in counts]
            tfs += counts.values()
            lengths.append(len(counts))
        ids = np.asarray(word_ids, dtype=np.int64)
        order = np.argsort(ids, kind="stable")  # by word, then by chunk position (the order they were added)
        self._positions = np.repeat(np.arange(len(chunks), dtype=np.int64), lengths)[order]
        self._tfs = np.asarray(tfs, dtype=np.float64)[order]
        self._bounds = np.concatenate(([0], np.cumsum(np.bincount(ids, minlength=len(vocabulary)))))
        self._vocabulary = vocabulary
        self._chunks = chunks

    def retrieve(self, query: str, k: int) -> list[ScoredChunk]:
        """Return up to ``k`` chunks sharing at least one word with ``query``, best first.

        Ties are broken by index order (the chunk given earlier to :meth:`index` ranks first).
        """
        if self._chunks is None:
            raise RuntimeError("KeywordRetriever.retrieve() called before index(); index the chunks first")
        scores = self.scores(query)
        chunks, hit = self._chunks, ScoredChunk.model_construct  # fields known valid: no validation per hit
        return [
            hit(chunk=chunks[position], score=float(scores[position]), rank=rank)
            for rank, position in enumerate(top_k(scores, k), start=1)
        ]

    def scores(self, query: str) -> np.ndarray:
        """Score of every indexed chunk for ``query``, by chunk position (0: no shared word)."""
        if self._chunks is None:
            raise RuntimeError("KeywordRetriever.scores() called before index(); index the chunks first")
        import numpy as np

        distinct = self.options.count == "distinct"
        scores = np.zeros(len(self._chunks))
        for word in dict.fromkeys(self._words(query)):
            found = self._vocabulary.get(word)
            if found is not None:
                start, end = self._bounds[found], self._bounds[found + 1]
                scores[self._positions[start:end]] += 1.0 if distinct else self._tfs[start:end]
        return scores

    def _words(self, text: str) -> list[str]:
        return words(text, drop_stopwords=self.options.drop_stopwords)


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Positions of the ``k`` highest non-zero scores, best first; ties go to the lower position."""
    import numpy as np

    candidates = np.flatnonzero(scores)
    if k <= 0 or candidates.size == 0:
        return []
    if candidates.size > k:  # keep everything tied with the k-th best, then order exactly
        kth = np.partition(scores[candidates], candidates.size - k)[candidates.size - k]
        candidates = candidates[scores[candidates] >= kth]
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:k].tolist()


@hookimpl
def register_retrievers(register):
    """Register the keyword retriever."""
    register(KeywordRetriever)
