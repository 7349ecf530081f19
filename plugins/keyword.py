"""The ``keyword`` retriever: keyword matching as described by GRAMMAR (``../shared/seeds/000``, section 2).

"Keyword-matching approaches select documents that share the highest number of common words." A chunk's
score is the number of distinct query words that also occur in it (or, with ``count = "occurrences"``, how
often those shared words occur in the chunk). Words come from :func:`ragassay.text.words`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
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
        """Build the inverted index: word -> (chunk positions, term frequencies) as numpy arrays."""
        import numpy as np

        chunks = list(chunks)
        postings: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
        for position, chunk in enumerate(chunks):
            for word, tf in Counter(self._words(chunk.text)).items():
                positions, tfs = postings[word]
                positions.append(position)
                tfs.append(tf)
        self._postings = {
            word: (np.asarray(positions, dtype=np.int64), np.asarray(tfs, dtype=np.float64))
            for word, (positions, tfs) in postings.items()
        }
        self._chunks = chunks

    def retrieve(self, query: str, k: int) -> list[ScoredChunk]:
        """Return up to ``k`` chunks sharing at least one word with ``query``, best first.

        Ties are broken by index order (the chunk given earlier to :meth:`index` ranks first).
        """
        if self._chunks is None:
            raise RuntimeError("KeywordRetriever.retrieve() called before index(); index the chunks first")
        scores = self.scores(query)
        return [
            ScoredChunk(chunk=self._chunks[position], score=float(scores[position]), rank=rank)
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
            if word in self._postings:
                positions, tfs = self._postings[word]
                scores[positions] += 1.0 if distinct else tfs
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
