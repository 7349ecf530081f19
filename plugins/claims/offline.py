"""The offline claim splitter and checker: no model, deterministic, free, and weak (docs/judges.md measures how).

- claims: the text's sentences (:func:`ragassay.sentences`) that have at least one content word;
- a label: ``Entailment`` when the lexical fact-checker (``plugins/judges/fact_check.py``,
  :class:`LexicalFactChecker`) finds at least ``threshold`` of the claim's content words in the target text,
  ``Neutral`` otherwise. It never says ``Contradiction``: word overlap cannot see a negation or a wrong number
  next to the right words, so a contradicted claim that repeats the target's words is labelled ``Entailment``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragassay import STOPWORDS, sentences, words
from ragassay.plugins.judges.fact_check import LexicalFactChecker

from .judging import Outcome
from .prompts import render_claim


def split_claims(text: str) -> list[str]:
    """The sentences of ``text`` that state something (have a content word)."""
    return [s for s in sentences(text) if set(words(s, drop_stopwords=True)) - STOPWORDS]


class OfflineClaims:
    """Extraction and checking without a model, with the same interface as the LLM ones."""

    def __init__(self, threshold: float):
        self.checker = LexicalFactChecker(threshold)

    async def extract(self, text: str) -> Outcome:
        claims = split_claims(text)
        return Outcome(claims, f"offline: {len(claims)} sentence(s) with content words")

    async def check(self, claims: Sequence[Any], target: str) -> Outcome:
        pairs = []
        for claim in claims:
            result = self.checker.check_now(render_claim(claim), [target])
            if result.correct is None:  # a claim without content words (replayed or hand-made): nothing to match
                pairs.append(("Neutral", f"offline: {result.error}"))
            else:
                pairs.append(("Entailment" if result.correct else "Neutral", f"offline: {result.explanation}"))
        return Outcome(pairs)
