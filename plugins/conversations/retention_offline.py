"""``knowledge_retention_offline``: :mod:`.retention`'s value with facts and statuses found by word overlap; weak.

- facts: the sentences (:func:`ragassay.sentences`) of the earlier user utterances that do not end in ``?`` and
  have a content word (a question is not a fact);
- ``asked_again``: some question of the reply (a sentence ending in ``?``) has content words, and at least
  ``threshold`` of them occur in the fact ("Where do you live?" asks "I live in Lyon." again);
- ``contradicted``: never; word overlap cannot see a contradiction;
- ``kept``: otherwise.

Why weak: every user statement counts as a fact (also "Thanks."), a question worded otherwise is not seen, and a
contradiction never is; its value can only be too high where the judge's would say "contradicted". Use it for
smoke tests and model-free runs; ``knowledge_retention`` is the measurement.
"""

from __future__ import annotations

from typing import Any

from ragassay import MetricResult, RAGOutput, Sample, Unscored, sentences

from .faithfulness_offline import content_words
from .retention_base import RetentionMetric, no_earlier_user_turn, retention_result
from .turn_judging import LexicalOptions
from .turn_prompts import turn_numbers

WEAK = "offline, weak: user statements as facts, questions matched by word overlap, contradictions never seen"


def user_facts(sample: Sample) -> list[tuple[str, int]]:
    """(sentence, turn) for every statement of the earlier user utterances (module docstring)."""
    found = []
    for utterance, turn in zip(sample.history, turn_numbers(sample.history)):
        if utterance.speaker != "user":
            continue
        found += [(s, turn) for s in sentences(utterance.text) if not s.endswith("?") and content_words(s)]
    return found


def fact_status(fact: str, questions: list[str], threshold: float) -> tuple[str, str]:
    """(status, explanation) of one fact given the reply's questions."""
    fact_words = content_words(fact)
    for question in questions:
        asked = content_words(question)
        if asked and len(asked & fact_words) / len(asked) >= threshold:
            share = len(asked & fact_words) / len(asked)
            return "asked_again", f"offline: the reply asks {question!r} ({share:.2f} of its content words in the fact)"
    return "kept", f"offline: no question of the reply shares {threshold:.2f} of its content words with the fact"


class KnowledgeRetentionOffline(RetentionMetric):
    """1 - share of the user's earlier statements that a question of the reply asks again (word overlap);
    offline and weak: it never sees a contradiction (module docstring)."""

    name = "knowledge_retention_offline"
    requires = frozenset({"conversation_id", "history", "answer"})
    Options = LexicalOptions

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if (skipped := no_earlier_user_turn(sample)) is not None:
            return skipped
        questions = [s for s in sentences(output.answer) if s.endswith("?")]
        facts: list[dict[str, Any]] = []
        for fact, turn in user_facts(sample):
            status, why = fact_status(fact, questions, self.options.threshold)
            facts.append({"fact": fact, "turn": turn, "status": status, "explanation": why})
        return retention_result(facts, f"{len(facts)} user statement(s) as facts", offline=WEAK)
