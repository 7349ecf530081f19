"""The ``bm25`` retriever: BM25 in two variants, with a configurable analyzer and title/text fields.

* ``variant = "okapi"`` (default): rank_bm25's ``BM25Okapi`` (k1 1.5, b 0.75, idf floor ``epsilon``), scores
  bit for bit equal to rank_bm25's;
* ``variant = "lucene"``: Lucene/Elasticsearch BM25 (k1 1.2, b 0.75, idf = ln(1 + (N − n + 0.5)/(n + 0.5))).

Formulas: :mod:`ragassay.plugins.bm25_scoring`; analysis (stop words, stemming):
:mod:`ragassay.plugins.bm25_analysis`. With ``fields = ["title", "text"]`` each field is scored with its own
statistics and the chunk's score is the best field's plus ``tie_breaker`` × the other fields' (Elasticsearch
``multi_match`` ``best_fields``); the title is ``chunk.metadata["title"]``. See docs/retrieval.md, "BM25 variants".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragassay import Chunk, DatasetError, Retriever, ScoredChunk, hookimpl
from ragassay.plugins.bm25_analysis import Analyzer, Stemmer, StopWords
from ragassay.plugins.bm25_scoring import FieldIndex, Params, Variant

if TYPE_CHECKING:  # numpy is imported on first use
    import numpy as np

log = logging.getLogger("ragassay.bm25")

FieldName = Literal["title", "text"]
#: k1 of each variant when the option is left out (b is 0.75 for both).
DEFAULT_K1 = {"okapi": 1.5, "lucene": 1.2}


class BM25Options(BaseModel):
    """Options of the BM25 retriever."""

    model_config = ConfigDict(extra="forbid")

    variant: Variant = Field(
        "okapi", description="'okapi': rank_bm25's BM25Okapi; 'lucene': Lucene/Elasticsearch BM25 (docs/retrieval.md)."
    )
    k1: float | None = Field(
        None, ge=0, description="Term-frequency saturation; None: the variant's default (okapi 1.5, lucene 1.2)."
    )
    b: float | None = Field(None, ge=0, le=1, description="Length normalisation, 0 none, 1 full; None: 0.75.")
    epsilon: float | None = Field(
        None,
        ge=0,
        description="okapi only: floor for the IDF of terms in more than half the chunks, as a fraction of the "
        "mean IDF; None: 0.25.",
    )
    stopwords: StopWords | None = Field(
        None,
        description="Stop words dropped from chunks and queries: 'ragassay' (ragassay's English list), 'lucene' "
        "(Lucene's EnglishAnalyzer set, 33 words), 'none'; None: as drop_stopwords says.",
    )
    drop_stopwords: bool | None = Field(
        None, description="Older switch: true = stopwords 'ragassay', false = 'none'; None: as stopwords says."
    )
    stemmer: Stemmer = Field(
        "none",
        description="'english': Snowball English (Porter2); 'porter': the Porter stemmer of Lucene's "
        "EnglishAnalyzer; 'none'. Both from PyStemmer.",
    )
    possessive: bool = Field(False, description="Drop a trailing possessive 's (Lucene EnglishPossessiveFilter).")
    fields: list[FieldName] = Field(
        default_factory=lambda: ["text"],
        min_length=1,
        description="Fields scored separately: 'text' (the chunk text) and 'title' (chunk.metadata['title']).",
    )
    field_boosts: dict[FieldName, float] = Field(
        default_factory=dict, description="Multiplier of each field's score (default 1), e.g. { title = 2.0 }."
    )
    tie_breaker: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Several fields: score = best field + tie_breaker × the other fields (Elasticsearch best_fields).",
    )
    query_terms: Literal["each", "unique"] = Field(
        "each",
        description="'each': a term repeated in the query counts each time (rank_bm25; Lucene's BooleanQuery has a "
        "clause per occurrence); 'unique': once.",
    )
    length_norm: Literal["exact", "lucene"] = Field(
        "exact",
        description="lucene variant: 'lucene' uses Lucene's one-byte document lengths (4 significant bits from 24 "
        "terms on), 'exact' the true lengths.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> BM25Options:
        if self.variant == "lucene" and self.epsilon is not None:
            raise ValueError("epsilon applies to variant 'okapi' only (Lucene's idf is never negative); drop it")
        if self.variant == "okapi" and self.length_norm != "exact":
            raise ValueError("length_norm 'lucene' applies to variant 'lucene'; set variant = 'lucene' or drop it")
        if self.drop_stopwords is not None and self.stopwords is not None:
            if self.drop_stopwords != (self.stopwords != "none"):
                raise ValueError(
                    f"drop_stopwords = {str(self.drop_stopwords).lower()} contradicts stopwords = "
                    f"'{self.stopwords}'; keep only stopwords"
                )
        if len(set(self.fields)) != len(self.fields):
            raise ValueError(f"fields {self.fields} names a field twice")
        unknown = sorted(set(self.field_boosts) - set(self.fields))
        if unknown:
            raise ValueError(f"field_boosts names {unknown}, which are not in fields {self.fields}")
        if any(boost <= 0 for boost in self.field_boosts.values()):
            raise ValueError("field_boosts must be positive")
        return self

    def effective(self) -> dict[str, Any]:
        """The options with every default resolved (what the retriever actually uses)."""
        stopwords = self.stopwords or ("none" if self.drop_stopwords is False else "ragassay")
        values: dict[str, Any] = {
            "variant": self.variant,
            "k1": DEFAULT_K1[self.variant] if self.k1 is None else self.k1,
            "b": 0.75 if self.b is None else self.b,
            "stopwords": stopwords,
            "stemmer": self.stemmer,
            "possessive": self.possessive,
            "fields": list(self.fields),
            "field_boosts": {name: self.field_boosts.get(name, 1.0) for name in self.fields},
            "tie_breaker": self.tie_breaker,
            "query_terms": self.query_terms,
        }
        if self.variant == "okapi":
            values["epsilon"] = 0.25 if self.epsilon is None else self.epsilon
        else:
            values["length_norm"] = self.length_norm
        return values

    def params(self) -> Params:
        """The scoring parameters."""
        eff = self.effective()
        return Params(self.variant, eff["k1"], eff["b"], eff.get("epsilon", 0.25), eff.get("length_norm") == "lucene")

    def analyzer(self) -> Analyzer:
        """The analyzer of chunks and queries."""
        return Analyzer(self.effective()["stopwords"], self.stemmer, self.possessive)


class BM25Retriever(Retriever):
    """Ranks chunks by BM25 (Okapi as rank_bm25, or Lucene/Elasticsearch) over one or several fields."""

    name = "bm25"
    Options = BM25Options

    _chunks: list[Chunk] | None = None

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Build the BM25 index over ``chunks``; raises :class:`DatasetError` when there are none.

        ``stats`` then holds the effective options, the chunk count, the vocabulary size of each field and the
        build time.
        """
        started = time.perf_counter()
        chunks = list(chunks)
        if not chunks:
            raise DatasetError(
                "bm25 retriever: the corpus has no chunks to index; check the [corpus] paths or source "
                "and that the documents are not empty"
            )
        opts = self.options
        self._analyzer, params = opts.analyzer(), opts.params()
        self._fields = {
            name: FieldIndex(self._analyzer.many(_field_texts(chunks, name)), params) for name in opts.fields
        }
        effective = opts.effective()
        self._boosts = effective["field_boosts"]
        self._chunks = chunks
        self.stats = {
            "options": effective,
            "chunks": len(chunks),
            "vocabulary": {name: len(index.vocabulary) for name, index in self._fields.items()},
            "index_s": round(time.perf_counter() - started, 3),
        }
        log.info("bm25 index: %s", self.stats)

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
        """BM25 scores of the chunks containing a term of ``query`` in a scored field: (ascending positions, scores).

        Matching is decided by term presence, not by the score: BM25 can score a matching chunk 0 (or
        below, via okapi's IDF floor), and every other chunk scores exactly 0.
        """
        if self._chunks is None:
            raise RuntimeError("BM25Retriever.retrieve() called before index(); index the chunks first")
        import numpy as np

        terms = self._analyzer.tokens(query)
        if self.options.query_terms == "unique":
            terms = list(dict.fromkeys(terms))
        size = len(self._chunks)
        per_field, matched = [], np.zeros(size, dtype=bool)
        for name, index in self._fields.items():
            field_scores, field_matched = np.zeros(size), np.zeros(size, dtype=bool)
            index.accumulate(terms, field_scores, field_matched)
            per_field.append((name, field_scores, field_matched))
            matched |= field_matched
        positions = np.flatnonzero(matched)
        if len(per_field) == 1:
            name, field_scores, _ = per_field[0]
            return positions, _boosted(field_scores[positions], self._boosts[name])
        return positions, self._best_fields(per_field, positions)

    def _best_fields(self, per_field: list, positions: np.ndarray) -> np.ndarray:
        """Elasticsearch best_fields (Lucene DisjunctionMaxQuery): max + tie_breaker × (sum − max), matched fields."""
        import numpy as np

        boosted = [(_boosted(s[positions], self._boosts[name]), m[positions]) for name, s, m in per_field]
        best = np.max([np.where(m, s, -np.inf) for s, m in boosted], axis=0)
        total = np.sum([np.where(m, s, 0.0) for s, m in boosted], axis=0)
        return best + (total - best) * self.options.tie_breaker


def _boosted(scores: np.ndarray, boost: float) -> np.ndarray:
    return scores if boost == 1.0 else scores * boost


def _field_texts(chunks: list[Chunk], name: str) -> list[str]:
    """The text of field ``name`` of every chunk; a title field nobody has is an error, a few missing are logged."""
    if name == "text":
        return [chunk.text for chunk in chunks]
    titles = [chunk.metadata.get("title") for chunk in chunks]
    bad = next((c for c, t in zip(chunks, titles) if t is not None and not isinstance(t, str)), None)
    if bad is not None:
        raise DatasetError(f"bm25 retriever: chunk {bad.id!r} has a metadata['title'] that is not text")
    if all(title is None for title in titles):
        raise DatasetError(
            "bm25 retriever: fields includes 'title' but no chunk has metadata['title']; use a chunker that keeps "
            'the title in the chunk metadata (e.g. the document chunker with title = "field") or set '
            'fields = ["text"]'
        )
    untitled = sum(not title for title in titles)
    if untitled:
        log.warning(
            "bm25 retriever: %d of %d chunks have no title; they score on their text only", untitled, len(chunks)
        )
    return [title or "" for title in titles]


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
