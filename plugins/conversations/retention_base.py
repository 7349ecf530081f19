"""What both ``knowledge_retention`` variants share (:mod:`.retention`, :mod:`.retention_offline`): the statuses,
the turns that are not scored, the value from the facts' statuses and its details."""

from __future__ import annotations

from typing import Any

from ragassay import Metric, MetricResult, RAGOutput, Sample, Unscored

from .turn_judging import not_a_turn
from .turn_prompts import turn_numbers

STATUSES = ("kept", "asked_again", "contradicted")
FORMULA = "1 - (earlier user facts asked again + contradicted) / earlier user facts"
SOURCE = (
    "DeepEval KnowledgeRetentionMetric (confident-ai/deepeval, docs 'Knowledge Retention') as the peer; "
    "made per turn and per fact, asked-again told from contradicted (issue 39)"
)


def user_turns(sample: Sample) -> tuple[int, ...]:
    """The numbers of the earlier turns in which the user spoke."""
    return tuple(n for u, n in zip(sample.history, turn_numbers(sample.history)) if u.speaker == "user")


def no_earlier_user_turn(sample: Sample) -> Unscored | None:
    """Unscored for a sample that is not a turn, or a turn with no earlier user utterance."""
    if (skipped := not_a_turn(sample)) is not None:
        return skipped
    if user_turns(sample):
        return None
    return Unscored(reason="no earlier user turn in Sample.history: nothing to retain")


def retention_result(facts: list[dict[str, Any]], explanation: str, **extra: Any) -> MetricResult | Unscored:
    """The value from the facts' statuses (module docstring), or Unscored when there is no fact."""
    counts = {status: sum(f["status"] == status for f in facts) for status in STATUSES}
    details = {"facts": facts, "counts": counts, "explanation": explanation, **extra}
    if not facts:
        return Unscored(reason="the user gave no fact in the earlier turns: nothing to retain", details=details)
    violated = counts["asked_again"] + counts["contradicted"]
    return MetricResult(value=1.0 - violated / len(facts), details=details)


class RetentionMetric(Metric):
    direction = "higher"
    value_range = (0.0, 1.0)
    formula = FORMULA
    source = SOURCE

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        raise NotImplementedError("use ascore")
