"""BM25 scoring of the ``bm25`` retriever: one sparse index per field, precomputed term weights.

A field index holds, for every term, the chunks containing it and the term's BM25 weight in each (a CSC matrix,
terms as columns). A query adds the weight columns of its terms into one array of chunk scores: no Python loop
over chunks. The weight of term t in chunk d is ``idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·dl/avgdl))``:

* ``okapi`` (rank_bm25's ``BM25Okapi``): idf = ln(N − n + 0.5) − ln(n + 0.5), where a negative idf (a term in
  more than half the chunks) becomes ``epsilon`` × the mean idf of the vocabulary; N counts every chunk and avgdl
  averages over every chunk. The weights are computed with rank_bm25's operations in its order, so the scores are
  bit for bit rank_bm25's ``get_scores``.
* ``lucene`` (Lucene ``BM25Similarity``; Elasticsearch's default similarity, whose ``LegacyBM25Similarity`` keeps
  the (k1 + 1) factor): idf = ln(1 + (N − n + 0.5)/(n + 0.5)), with N and avgdl over the chunks that have at least
  one term in the field (Lucene's ``docCount``). With ``lossy_lengths`` dl is Lucene's one-byte norm
  (:func:`lucene_length`), as Lucene >= 7 stores it; avgdl stays exact, as in Lucene.

Sources: Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond", Eq. 3.15 and 3.26;
rank_bm25 0.2.2 ``BM25Okapi``; Lucene 9 ``BM25Similarity`` and ``SmallFloat.intToByte4``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # numpy and scipy are imported on first use
    import numpy as np

Variant = Literal["okapi", "lucene"]

#: Lucene SmallFloat: lengths below this are stored exactly; above, with 4 significant bits.
_NUM_FREE_VALUES = 24


def _long_to_int4(value: int) -> int:
    """Lucene ``SmallFloat.longToInt4``: a float-like code keeping the 4 most significant bits."""
    bits = value.bit_length()
    if bits < 4:
        return value
    shift = bits - 4
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def _int4_to_long(code: int) -> int:
    """Lucene ``SmallFloat.int4ToLong``."""
    shift = (code >> 3) - 1
    return code & 0x07 if shift == -1 else ((code & 0x07) | 0x08) << shift


def lucene_length(length: int) -> int:
    """The document length Lucene's BM25 sees: ``byte4ToInt(intToByte4(length))`` (Lucene >= 7 norms).

    Exact below 24; above, rounded down to 4 significant bits of ``length − 24`` (e.g. 250 -> 248).
    """
    if length < _NUM_FREE_VALUES:
        return length
    return _NUM_FREE_VALUES + _int4_to_long(_long_to_int4(length - _NUM_FREE_VALUES))


@dataclasses.dataclass(frozen=True)
class Params:
    """Effective scoring parameters (the variant's defaults already applied)."""

    variant: Variant
    k1: float
    b: float
    epsilon: float = 0.25
    lossy_lengths: bool = False


class FieldIndex:
    """The BM25 index of one field of every chunk: vocabulary, postings and per-posting weights."""

    def __init__(self, docs: Sequence[Sequence[str]], params: Params):
        import numpy as np
        from scipy import sparse

        self.size = len(docs)
        self.vocabulary: dict[str, int] = {}
        ids = [self.vocabulary.setdefault(tok, len(self.vocabulary)) for doc in docs for tok in doc]
        self.lengths = np.fromiter((len(doc) for doc in docs), dtype=np.int64, count=self.size)
        rows = np.repeat(np.arange(self.size, dtype=np.int64), self.lengths)
        counts = sparse.coo_matrix(
            (np.ones(len(ids), dtype=np.int64), (rows, np.asarray(ids, dtype=np.int64))),
            shape=(self.size, len(self.vocabulary)),
        ).tocsc()
        counts.sum_duplicates()
        counts.sort_indices()
        self.indptr, self.postings = counts.indptr, counts.indices
        self.weights = _weights(counts.data, self.postings, self.indptr, self.lengths, params)

    @property
    def documents(self) -> int:
        """Chunks with at least one term in this field."""
        return int((self.lengths > 0).sum())

    def accumulate(self, terms: Sequence[str], scores: np.ndarray, matched: np.ndarray) -> None:
        """Add the weights of ``terms`` (each occurrence) into ``scores``; mark the chunks containing one."""
        for term in terms:
            column = self.vocabulary.get(term)
            if column is None:
                continue
            start, end = self.indptr[column], self.indptr[column + 1]
            docs = self.postings[start:end]
            scores[docs] += self.weights[start:end]
            matched[docs] = True


def _weights(tf: np.ndarray, docs: np.ndarray, indptr: np.ndarray, lengths: np.ndarray, params: Params) -> np.ndarray:
    """Weight of each posting, in rank_bm25's order of operations (so okapi weights are bit-identical)."""
    import numpy as np

    df = np.diff(indptr)
    if params.variant == "okapi":
        n_docs = len(lengths)
        avgdl = int(lengths.sum()) / n_docs if n_docs else 0.0
        idf = np.asarray(okapi_idf(df.tolist(), n_docs, params.epsilon), dtype=np.float64)
        dl = lengths
    else:
        n_docs = int((lengths > 0).sum())
        avgdl = int(lengths.sum()) / n_docs if n_docs else 0.0
        idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5))  # Lucene: Math.log(1 + ...)
        dl = np.asarray([lucene_length(int(n)) for n in lengths], dtype=np.int64) if params.lossy_lengths else lengths
    if not len(tf):
        return np.zeros(0)
    k1, b = params.k1, params.b
    term_idf = np.repeat(idf, df)
    doc_len = dl[docs]
    return term_idf * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl)))


def okapi_idf(df: Sequence[int], n_docs: int, epsilon: float) -> list[float]:
    """rank_bm25 ``BM25Okapi._calc_idf``: idf per term (in first-seen order), negative ones floored.

    The floor is ``epsilon`` × the mean idf, summed in the same order as rank_bm25 so it is the same float.
    """
    idf = [math.log(n_docs - freq + 0.5) - math.log(freq + 0.5) for freq in df]
    if not idf:
        return idf
    total = 0.0
    for value in idf:  # a plain left-to-right sum, as rank_bm25 (not sum(): it compensates on Python >= 3.12)
        total += value
    floor = epsilon * (total / len(idf))
    return [floor if value < 0 else value for value in idf]
