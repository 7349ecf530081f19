"""The run's metrics share one :class:`ragassay.ScoringUnit` per output (core/engine/scoring.py): a value several
metrics derive alike through ``unit.shared`` is computed once per output, never carried to the next output, and
a metric without ``score_unit`` is scored as before."""

from __future__ import annotations

import asyncio

from ragassay import Metric, MetricResult, RAGOutput, Sample, ScoringUnit, Unscored
from ragassay.engine.scoring import Scorers


class WordCount(Metric):
    """Words of the answer (a value that two metrics read)."""

    name = "word_count"
    computed: list[str] = []  # the answers whose words were counted, in order

    @classmethod
    def words(cls, unit: ScoringUnit) -> int:
        def count() -> int:
            cls.computed.append(unit.output.answer)
            return len(unit.output.answer.split())

        return unit.shared(("test", "words"), count)

    def score(self, sample: Sample, output: RAGOutput) -> MetricResult:
        return self.score_unit(ScoringUnit(sample, output))

    def score_unit(self, unit: ScoringUnit) -> MetricResult:
        return MetricResult(value=float(self.words(unit)), details={"answer": unit.output.answer})


class ShortAnswer(WordCount):
    """1 when the answer has at most three words."""

    name = "short_answer"

    def score_unit(self, unit: ScoringUnit) -> float:
        return 1.0 if self.words(unit) <= 3 else 0.0


class Broken(WordCount):
    """Fails while it scores."""

    name = "broken"

    def score_unit(self, unit: ScoringUnit) -> float:
        raise RuntimeError("no words today")


class Plain(Metric):
    """An ordinary asynchronous metric (no score_unit): the answer's length in characters."""

    name = "plain"

    async def ascore(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        return float(len(output.answer)) if output.answer else Unscored(reason="no answer")


def score(outputs: list[RAGOutput]) -> list[dict[str, tuple]]:
    scorers = Scorers.ordered(
        [("words", WordCount()), ("short", ShortAnswer()), ("broken", Broken()), ("plain", Plain())], []
    )
    sample = Sample(question_id="q1", question="How many words?")

    async def all_outputs():
        return [await scorers.score(sample, output) for output in outputs]

    return [
        {v.metric: (v.value, v.unscored_reason, v.details) for v in values} for values, _ in asyncio.run(all_outputs())
    ]


def test_a_shared_value_is_computed_once_per_output_and_never_reused():
    WordCount.computed.clear()
    first, second = score([RAGOutput(answer="one two three four"), RAGOutput(answer="just two")])
    assert WordCount.computed == ["one two three four", "just two"]  # once per output, for both metrics
    assert first["words"] == (4.0, None, {"answer": "one two three four"}) and first["short"] == (0.0, None, {})
    assert second["words"] == (2.0, None, {"answer": "just two"}) and second["short"] == (1.0, None, {})
    assert first["plain"] == (18.0, None, {}) and second["plain"] == (8.0, None, {})


def test_a_failing_score_unit_is_unscored_with_the_error_and_the_others_go_on():
    (values,) = score([RAGOutput(answer="")])
    assert values["broken"] == (None, "error: RuntimeError: no words today", {})
    assert values["words"] == (0.0, None, {"answer": ""}) and values["short"] == (1.0, None, {})
    assert values["plain"] == (None, "no answer", {})


def test_scored_alone_a_metric_gets_a_unit_of_its_own():
    WordCount.computed.clear()
    sample, output = Sample(question_id="q1", question="?"), RAGOutput(answer="a b")
    assert WordCount().score(sample, output).value == 2.0 and ShortAnswer().score(sample, output) == 1.0
    assert WordCount.computed == ["a b", "a b"]  # two units: computed for each
