"""Text analysis of the ``bm25`` retriever: tokens, stop words, stemming (applied alike to chunks and queries).

The steps, in Lucene's ``EnglishAnalyzer`` order:

1. optionally drop the English possessive ``'s`` (Lucene ``EnglishPossessiveFilter``);
2. :func:`ragassay.words`: lower-cased ``\\w+`` tokens with accents folded;
3. drop stop words: ragassay's list (:data:`ragassay.STOPWORDS`), Lucene's ``EnglishAnalyzer`` default set
   (:data:`LUCENE_STOPWORDS`, 33 words; Elasticsearch's ``_english_`` list) or none;
4. stem: Snowball English ("Porter2", ``english``) or the original Porter algorithm (``porter``, the stemmer of
   Lucene's ``EnglishAnalyzer`` and Elasticsearch's ``english`` analyzer), both from PyStemmer.

Tokenisation differs from Lucene's ``StandardTokenizer`` (UAX #29): ``don't`` and ``U.S.`` split at the
apostrophe and dot here, and accents are folded.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Literal

from ragassay import STOPWORDS, MissingDependencyError, words

Stemmer = Literal["none", "english", "porter"]
StopWords = Literal["ragassay", "lucene", "none"]

#: Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (also Elasticsearch's ``_english_`` stop words).
LUCENE_STOPWORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then there these
    they this to was will with""".split()
)

_STOP_SETS: dict[str, frozenset[str]] = {"ragassay": STOPWORDS, "lucene": LUCENE_STOPWORDS, "none": frozenset()}
#: ``'s`` at the end of a word (ASCII, right single quote, fullwidth apostrophe), as EnglishPossessiveFilter.
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019\uff07][sS]\b")


@dataclasses.dataclass(frozen=True)
class Analyzer:
    """Turns text into index terms; the same instance analyses the chunks and the queries."""

    stopwords: StopWords = "ragassay"
    stemmer: Stemmer = "none"
    possessive: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "_stop", _STOP_SETS[self.stopwords])
        object.__setattr__(self, "_stem", _stem_function(self.stemmer))

    def tokens(self, text: str) -> list[str]:
        """Terms of one text (a query)."""
        return self.many([text])[0]

    def many(self, texts: Sequence[str]) -> list[list[str]]:
        """Terms of each text; each distinct token is stemmed once."""
        stop = self._stop
        if self.possessive:
            texts = [_POSSESSIVE.sub("", text) for text in texts]
        analysed = [[tok for tok in words(text) if tok not in stop] for text in texts]
        if self._stem is None:
            return analysed
        distinct = sorted({tok for toks in analysed for tok in toks})
        stems = dict(zip(distinct, self._stem(distinct)))
        return [[stems[tok] for tok in toks] for toks in analysed]


def _stem_function(name: str):
    """``list[str] -> list[str]`` for a PyStemmer algorithm, or None for no stemming."""
    if name == "none":
        return None
    try:
        import Stemmer as pystemmer
    except ImportError as exc:  # pragma: no cover - a dependency of ragassay
        raise MissingDependencyError(
            f"the bm25 stemmer {name!r} needs PyStemmer ({exc}). Install it with: pip install PyStemmer"
        ) from exc
    return pystemmer.Stemmer(name).stemWords
