"""What both ``answerability_behaviour`` variants share (:mod:`.answerability`, :mod:`.answerability_offline`): the
behaviours, which one each answerability label expects, the unlabelled turn, the value and its details."""

from __future__ import annotations

from typing import Any

from ragassay import Metric, MetricResult, RAGOutput, Sample, Unscored

BEHAVIOURS = ("answer", "refuse", "clarify")
EXPECTED = {"answerable": "answer", "unanswerable": "refuse", "underspecified": "clarify", "partial": "answer"}
SOURCE = (
    "MTRAG (Katsis et al., 2025, arXiv:2501.03468): the answerability labels of its tasks (answerable, "
    "unanswerable, underspecified, partial) and the refusal behaviour measured on them; issue 39 (answer / refuse / "
    "clarify)"
)
FORMULA = "1 if the reply's behaviour (answer, refuse, clarify) is the one the turn's label expects, else 0"


def unlabelled(sample: Sample) -> Unscored | None:
    """Unscored when the turn has no answerability label (nothing to score the behaviour against)."""
    if sample.answerability is not None:
        return None
    return Unscored(reason="the turn has no answerability label (Sample.answerability): no behaviour is expected")


def scored(behaviour: str, label: str, explanation: str, **extra: Any) -> MetricResult:
    """The value (1.0 when ``behaviour`` is what ``label`` expects, else 0.0) and the details."""
    expected = EXPECTED[label]
    details = {"behaviour": behaviour, "label": label, "expected": expected, "explanation": explanation, **extra}
    return MetricResult(value=float(behaviour == expected), details=details)


class BehaviourMetric(Metric):
    """What both variants declare."""

    direction = "higher"
    value_range = (0.0, 1.0)
    formula = FORMULA
    source = SOURCE

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        raise NotImplementedError("use ascore")
