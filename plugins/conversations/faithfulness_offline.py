"""The offline turn support rates (``turn_context_support_offline``, ``turn_history_support_offline``,
``turn_unsupported_offline``): no model, deterministic, free, and weak.

- claims: the answer's sentences (:func:`ragassay.sentences`) that have a content word (as the offline claim
  metrics split them, ``plugins/claims/offline.py``) and do not end in ``?`` (a question states nothing);
- overlap of a claim with a text: the share of the claim's distinct content words (:func:`ragassay.words` without
  stop words) that occur among the text's words;
- support: ``context`` when some retrieved context reaches ``threshold`` (the context with the highest overlap,
  the first on a tie); else ``history`` when some earlier utterance, the user's or the system's, reaches it (the
  highest, the latest turn on a tie); else ``none``.

Why weak: word overlap cannot see a negation or a wrong number next to the right words (a contradicted claim that
repeats a context's words counts as supported), a paraphrase with other words counts as unsupported, and the
sentence is not a claim (one sentence may state several). Use it for smoke tests and where no judge model is
allowed; the judge-based ``turn_*`` metrics are the measurement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragassay import STOPWORDS, RAGOutput, Sample, Unscored, words
from ragassay.plugins.claims.offline import split_claims

from .faithfulness_base import TurnSupportMetric, claim_row, rate_classes
from .turn_judging import LexicalOptions
from .turn_prompts import turn_numbers

WEAK = "offline, weak: sentences as claims, content-word overlap as support (docs/metrics.md)"


def content_words(text: str) -> set[str]:
    """The distinct content words of ``text`` (lower-cased, accents folded, no stop words)."""
    return set(words(text, drop_stopwords=True)) - STOPWORDS


def overlap(claim_words: set[str], text: str) -> float:
    """Share of ``claim_words`` that occur in ``text`` (0 for a claim without content words)."""
    if not claim_words:
        return 0.0
    return len(claim_words & set(words(text))) / len(claim_words)


def best(claim_words: set[str], texts: Sequence[str], prefer_last: bool = False) -> tuple[int | None, float]:
    """(index of the text with the highest overlap, that overlap); ties go to the first text, or the last with
    ``prefer_last``; (None, 0.0) without texts."""
    found, top = None, 0.0
    for index, text in enumerate(texts):
        share = overlap(claim_words, text)
        if found is None or share > top or (prefer_last and share == top):
            found, top = index, share
    return found, top


def attribute(claim: str, contexts: Sequence[str], history: Sequence[Any], threshold: float) -> dict[str, Any]:
    """The ``details["claims"]`` row of one sentence: context first, then history, else none (module docstring)."""
    claim_words = content_words(claim)
    context, context_share = best(claim_words, contexts)
    if context is not None and context_share >= threshold:
        why = f"{context_share:.2f} of its content words occur in context {context} (threshold {threshold:.2f})"
        return claim_row(claim, "context", None, context, f"offline: {why}")
    said, history_share = best(claim_words, [u.text for u in history], prefer_last=True)
    if said is not None and history_share >= threshold:
        turn = turn_numbers(history)[said]
        why = (
            f"best context overlap {context_share:.2f}; {history_share:.2f} of its content words occur in what "
            f"the {history[said].speaker} said at turn {turn} (threshold {threshold:.2f})"
        )
        return claim_row(claim, "history", turn, None, f"offline: {why}")
    why = f"best overlap {context_share:.2f} with a context, {history_share:.2f} with an earlier turn"
    return claim_row(claim, "none", None, None, f"offline: {why} (threshold {threshold:.2f})")


class _OfflineTurnSupport(TurnSupportMetric):
    family = "offline"
    requires = frozenset({"conversation_id", "answer", "contexts"})
    Options = LexicalOptions
    weak = WEAK

    def judge_name(self) -> str:
        return f"offline lexical support (threshold {self.options.threshold})"

    async def supports(self, sample: Sample, output: RAGOutput) -> tuple[list[dict[str, Any]], str] | Unscored:
        claims = [s for s in split_claims(output.answer) if not s.endswith("?")]
        rows = [attribute(c, output.contexts, sample.history, self.options.threshold) for c in claims]
        return rows, f"{WEAK}; {len(rows)} sentence(s) with content words"


OFFLINE_METRICS = rate_classes(_OfflineTurnSupport, "_offline", f"; {WEAK}")
