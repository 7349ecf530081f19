"""Scoring one output: every metric (derived metrics last) and every judge, each call metered for cost.

Rules that make every stored value trustworthy:

- a metric returns a float, a :class:`MetricResult` (value with details) or :class:`Unscored`; anything else,
  an exception, NaN/infinity or a value outside the metric's declared ``value_range`` is stored as unscored
  with ``error: ...`` (never guessed, never NaN);
- a :class:`DerivedMetric` gets the values of its inputs for the same unit (computed now or stored earlier);
- model calls made while a metric or judge works are recorded as that value's evaluation cost;
- the metrics score the output one after another within one :class:`~ragassay.models.ScoringUnit`: a metric that
  defines ``score_unit(unit)`` is called with it, and what it computes through ``unit.shared`` is computed once
  for the output (the per-hop matching, the compared tool calls), never reused for another output;
- on the output of a system that gives no answer (``RAGSystem.answers = False``), a metric or judge that reads
  the answer (``uses_answer``) is not called: it is stored as unscored with the reason (``no_answer``), never
  as the score of an empty answer;
- with ``repeats = N > 1`` (``ragassay run --repeat N``), every metric and judge whose value made model calls
  (and every derived metric over one) is scored again for repeats 1..N-1 inside
  :func:`ragassay.llm.repeating`, so each repeat is a real call with its own cache key.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..components import DerivedMetric, Judge, Metric
from ..llm.budget import BudgetExhausted
from ..llm.meter import UsageMeter, metering
from ..llm.repeats import repeating
from ..models import Judgement, MetricResult, MetricValue, RAGOutput, Sample, ScoringUnit, Unscored

TOLERANCE = 1e-9


@dataclasses.dataclass
class Scorers:
    """The run's metrics (base metrics first, then derived ones) and judges, by label."""

    metrics: list[tuple[str, Metric]]
    judges: list[tuple[str, Judge]]

    @classmethod
    def ordered(cls, metrics: list[tuple[str, Metric]], judges: list[tuple[str, Judge]]) -> Scorers:
        base = [(label, m) for label, m in metrics if not isinstance(m, DerivedMetric)]
        derived = [(label, m) for label, m in metrics if isinstance(m, DerivedMetric)]
        return cls(base + derived, judges)

    @property
    def labels(self) -> set[str]:
        return {label for label, _ in self.metrics}

    @property
    def judge_labels(self) -> set[str]:
        return {label for label, _ in self.judges}

    def needs_stored_values(self, skip_metrics: set[str]) -> bool:
        """Whether a derived metric still to compute depends on a value computed in an earlier session."""
        return any(
            isinstance(m, DerivedMetric) and label not in skip_metrics and set(m.inputs()) & skip_metrics
            for label, m in self.metrics
        )

    async def score(
        self,
        sample: Sample,
        output: RAGOutput,
        *,
        skip_metrics: set[str] = frozenset(),
        skip_judges: set[str] = frozenset(),
        known: Mapping[str, float | None] | None = None,
        reuse: Callable[[str], MetricValue | Judgement | None] = lambda label: None,
        repeats: int = 1,
        stored_repeats: set[tuple[str, int]] = frozenset(),
        calling: set[str] = frozenset(),
        no_answer: str | None = None,
    ) -> tuple[list[MetricValue], list[Judgement]]:
        """Values of the metrics and judges not in ``skip_*``; ``known`` holds stored values of skipped
        metrics (inputs of derived metrics); ``reuse(label)`` may return a value stored for the same output
        and the same metric spec by an earlier run, which is copied instead of recomputed.

        With ``repeats > 1``, also repeats 1..repeats-1 of the model-calling labels (``calling``: those known
        from stored values, plus those whose value computed now made calls) not in ``stored_repeats``
        (``(label, repeat)`` pairs, judges as ``judge:<label>``).

        ``no_answer``: the reason the output has no answer (its system is retrieval-only), or None."""
        values: dict[str, float | None] = dict(known or {})
        metric_values: list[MetricValue] = []
        judgements: list[Judgement] = []
        unit = ScoringUnit(sample, output)  # the values the metrics of this output share, then dropped
        with metering() as meter:  # one meter per unit; the scorers below run one after another
            try:
                for label, metric in self.metrics:
                    if label in skip_metrics:
                        continue
                    value = reuse(label)
                    if no_answer is not None and metric.uses_answer:
                        value = MetricValue(metric=label, value=None, unscored_reason=no_answer)
                    elif not isinstance(value, MetricValue):
                        value = await metric_value(label, metric, sample, output, values, meter, unit)
                    values[label] = value.value
                    metric_values.append(value)
                for label, judge in self.judges:
                    if label in skip_judges:
                        continue
                    if no_answer is not None and judge.uses_answer:
                        judgements.append(Judgement(judge=label, verdict="unscored", score=None, explanation=no_answer))
                    else:
                        reused = reuse(f"judge:{label}")
                        judgements.append(
                            reused
                            if isinstance(reused, Judgement)
                            else await judgement(label, judge, sample, output, meter)
                        )
                if repeats > 1:
                    called = set(calling) | {v.metric for v in metric_values if _called(v.usage)}
                    called |= {f"judge:{j.judge}" for j in judgements if _called(j.usage)}
                    more = await self._repeats(sample, output, range(1, repeats), called, stored_repeats, values, meter)
                    metric_values, judgements = metric_values + more[0], judgements + more[1]
            except BudgetExhausted:
                pass  # a call was refused: keep what was scored, the rest stays missing (a resume adds it)
        return metric_values, judgements

    def repeated(self, calling: set[str]) -> list[str]:
        """The labels ``run --repeat`` repeats, in scoring order: the model-calling metrics and judges
        (``calling``) and the derived metrics with a repeated input."""
        labels: list[str] = []
        for label, metric in self.metrics:
            if label in calling or (isinstance(metric, DerivedMetric) and set(metric.inputs()) & set(labels)):
                labels.append(label)
        return labels + [f"judge:{label}" for label, _ in self.judges if f"judge:{label}" in calling]

    async def _repeats(
        self,
        sample: Sample,
        output: RAGOutput,
        indices: range,
        calling: set[str],
        stored: set[tuple[str, int]],
        values: Mapping[str, float | None],
        meter: UsageMeter,
    ) -> tuple[list[MetricValue], list[Judgement]]:
        """Repeats ``indices`` of the repeated labels not yet stored; a derived metric of repeat r reads the
        repeat-r values of its inputs (repeat 0 for inputs that are not repeated)."""
        metrics, judges = dict(self.metrics), dict(self.judges)
        metric_values: list[MetricValue] = []
        judgements: list[Judgement] = []
        for index in indices:
            current = dict(values)
            with repeating(index):
                for label in self.repeated(calling):
                    if (label, index) in stored:
                        continue
                    if label.startswith("judge:"):
                        name = label.removeprefix("judge:")
                        found = await judgement(name, judges[name], sample, output, meter)
                        judgements.append(found.model_copy(update={"repeat": index}))
                    else:
                        value = await metric_value(label, metrics[label], sample, output, current, meter)
                        current[label] = value.value
                        metric_values.append(value.model_copy(update={"repeat": index}))
        return metric_values, judgements


def _called(usage: Any) -> bool:
    """Whether a value's usage shows model calls (made now or served from the response cache)."""
    return usage is not None and (usage.calls or usage.cache_hits) > 0


async def metric_value(
    label: str,
    metric: Metric,
    sample: Sample,
    output: RAGOutput,
    values: Mapping[str, float | None],
    meter: UsageMeter | None = None,
    unit: ScoringUnit | None = None,
) -> MetricValue:
    """One metric's value for one output, validated (see the module docstring); ``unit``: the
    :class:`~ragassay.models.ScoringUnit` of ``sample`` and ``output`` that the run's metrics share, for a metric
    that defines ``score_unit`` (without it, such a metric scores with a unit of its own)."""
    if meter is None:
        with metering() as fresh:
            return await metric_value(label, metric, sample, output, values, fresh, unit)
    inputs = {name: values.get(name) for name in metric.inputs()} if isinstance(metric, DerivedMetric) else None
    meter.usage = None
    try:
        if inputs is not None:
            result: Any = metric.derive(inputs)
        elif unit is not None and hasattr(metric, "score_unit"):
            result = metric.score_unit(unit)
        else:
            result = await metric.ascore(sample, output)
    except Exception as exc:  # noqa: BLE001 - recorded as unscored with the reason
        result = exc
    return _checked(label, metric, (result, meter.usage))


async def _metered(call: Callable[[], Awaitable[Any]], meter: UsageMeter | None) -> tuple[Any, Any]:
    """The call's result (or its exception) and the usage of the model calls it made, recorded by ``meter``
    (the open meter of this unit; a fresh one when None)."""
    if meter is None:
        with metering() as fresh:
            return await _metered(call, fresh)
    meter.usage = None
    try:
        result: Any = await call()
    except Exception as exc:  # noqa: BLE001 - recorded as unscored with the reason
        result = exc
    return result, meter.usage


def _checked(label: str, metric: Metric, outcome: tuple[Any, Any]) -> MetricValue:
    result, usage = outcome
    if type(result) is float and _in_range(result, metric.value_range):  # the common cases
        return MetricValue(metric=label, value=result, usage=usage)
    if type(result) is MetricResult and _in_range(result.value, metric.value_range):
        return MetricValue(metric=label, value=result.value, details=result.details, usage=usage)
    base = {"metric": label, "usage": usage}
    if isinstance(result, Exception):
        return MetricValue(**base, value=None, unscored_reason=f"error: {describe(result)}")
    if isinstance(result, Unscored):
        return MetricValue(**base, value=None, unscored_reason=result.reason, details=result.details)
    details = result.details if isinstance(result, MetricResult) else {}
    number = result.value if isinstance(result, MetricResult) else result
    try:
        number = float(number)
    except (TypeError, ValueError):
        return MetricValue(**base, value=None, unscored_reason=f"error: metric returned {number!r}")
    problem = _out_of_range(number, metric.value_range)
    if problem or math.isnan(number):
        return MetricValue(
            **base, value=None, unscored_reason=f"error: metric returned {number}{problem}", details=details
        )
    return MetricValue(**base, value=number, details=details)


def _in_range(number: float, value_range: tuple[float | None, float | None]) -> bool:
    low, high = value_range
    return (
        math.isfinite(number)
        and (low is None or number >= low - TOLERANCE)
        and (high is None or number <= high + TOLERANCE)
    )


def _out_of_range(number: float, value_range: tuple[float | None, float | None]) -> str:
    if not math.isfinite(number):
        return " (not a finite number)" if not math.isnan(number) else ""
    low, high = value_range
    if (low is not None and number < low - TOLERANCE) or (high is not None and number > high + TOLERANCE):
        return f", outside its declared range [{_bound(low)}, {_bound(high)}]"
    return ""


def _bound(value: float | None) -> str:
    return "-inf" if value is None else f"{value:g}"


async def judgement(
    label: str, judge: Judge, sample: Sample, output: RAGOutput, meter: UsageMeter | None = None
) -> Judgement:
    """One judge's verdict on one output, with the model calls it made as its usage."""
    result, usage = await _metered(lambda: judge.judge(sample, output), meter)
    if isinstance(result, Exception):
        return Judgement(
            judge=label, verdict="unscored", score=None, explanation=f"error: {describe(result)}", usage=usage
        )
    if result.score is not None and not (math.isfinite(result.score) and -TOLERANCE <= result.score <= 1 + TOLERANCE):
        return Judgement(
            judge=label,
            verdict="unscored",
            score=None,
            usage=usage,
            explanation=f"error: judge returned score {result.score}, outside [0, 1]",
        )
    total = usage if result.usage is None else result.usage if usage is None else result.usage + usage
    return result.model_copy(update={"judge": label, "usage": total})


def describe(exc: BaseException) -> str:
    """``Type: first line of the message``."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
