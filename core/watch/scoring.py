"""Scoring a batch of traces the ordinary way (:class:`~ragassay.engine.processing.UnitProcessor`: the
``trace_replay`` answer, then every metric and judge, metered) under the watch's judge budget: a value whose model
call the budget refused is stored as unscored with the reason (never dropped), and a metric that needs no call is
still scored after a refusal."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from ..engine.processing import ItemInputs, UnitProcessor, WorkItem
from ..engine.scoring import metric_value
from ..llm.budget import BudgetExhausted, BudgetLedger, using
from ..models import Judgement, MetricValue, Sample
from ..store.units import UnitResult

BUDGET = "budget"  # the reason of a trace unscored for budget (watch_traces.reason)


@dataclasses.dataclass
class Scored:
    """What the watch keeps of a scored trace until its batch is committed: the unit result (settled into its rows
    when the store settles results: the output and the values are then freed at once, so fewer objects live
    until the commit), the values its detectors read (:func:`column_values`), whether the budget refused any
    (:func:`refused`) and its evaluation events (sent after the commit; none without ``[watch] otlp``)."""

    result: UnitResult
    values: dict[str, float]
    refused: bool
    events: list[Any]


async def score_samples(
    processor: UnitProcessor,
    system: Any,
    system_key: str,
    samples: Sequence[Sample],
    ledger: BudgetLedger | None,
    concurrency: int,
    raws: Sequence[str] | None = None,
    keep: Callable[[UnitResult], Any] | None = None,
) -> list[Any]:
    """One unit result per sample, in order. Under a budget the samples are scored one after another (the traces
    that get the calls are the first ones, the same on every run); otherwise ``concurrency`` at a time.
    ``raws``: each sample's JSON when the caller has it (it keys the sample). ``keep``: what to keep of each result,
    applied as soon as it is made (the watch's :class:`Scored`); by default the result itself."""
    limit = asyncio.Semaphore(1 if ledger is not None else concurrency)
    raws = raws if raws is not None else [sample.model_dump_json() for sample in samples]

    async def one(sample: Sample, raw: str) -> Any:
        async with limit:
            result = await score_sample(processor, system, system_key, sample, ledger, raw)
        return result if keep is None else keep(result)

    with using(ledger):
        return list(await asyncio.gather(*(one(sample, raw) for sample, raw in zip(samples, raws, strict=True))))


async def score_sample(
    processor: UnitProcessor,
    system: Any,
    system_key: str,
    sample: Sample,
    ledger: BudgetLedger | None,
    raw: str | None = None,
) -> UnitResult:
    """The unit result of ``sample`` (``raw``: its JSON, made here when not given)."""
    raw = sample.model_dump_json() if raw is None else raw
    item = WorkItem(sample, hashlib.sha256(raw.encode()).hexdigest(), system_key, [(system, None)])
    results = await processor.process(item, ItemInputs())
    if not results:  # the answer's own call was refused (trace_replay makes none)
        return UnitResult(system.name, sample.question_id, "failed", error=f"{BUDGET}: {_why(ledger)}")
    result = results[0]
    if result.status == "ok":
        await _fill_refused(processor, sample, result, ledger)
    return result


async def _fill_refused(processor: UnitProcessor, sample: Sample, result: UnitResult, ledger) -> None:
    """The values the budget refused, stored as unscored with the reason; the metrics left out after a refusal
    that need no model call, scored now (each under a ledger that refuses every call)."""
    scorers = processor.scorers
    have = {m.metric for m in result.metrics}
    reason = f"unscored: {BUDGET} ({_why(ledger)})"
    values = {m.metric: m.value for m in result.metrics}
    for label, metric in scorers.metrics:
        if label in have:
            continue
        try:
            with using(_refusing(ledger)):
                value = await metric_value(label, metric, sample, result.output, values)
        except BudgetExhausted:
            value = MetricValue(metric=label, value=None, unscored_reason=reason)
        values[label] = value.value
        result.metrics.append(value)
    judged = {j.judge for j in result.judgements}
    result.judgements += [
        Judgement(judge=label, verdict="unscored", score=None, explanation=reason)
        for label, _ in scorers.judges
        if label not in judged
    ]


def refused(result: UnitResult) -> bool:
    """Whether the budget refused any of the result's values."""
    mark = f"unscored: {BUDGET} ("
    return any((m.unscored_reason or "").startswith(mark) for m in result.metrics) or any(
        j.score is None and j.explanation.startswith(mark) for j in result.judgements
    )


def _refusing(ledger: BudgetLedger | None) -> BudgetLedger:
    from ..llm.budget import Budget

    refusing = BudgetLedger(Budget(calls=1), ledger.prices if ledger is not None else None)
    refusing.stopped = _why(ledger)
    return refusing


def _why(ledger: BudgetLedger | None) -> str:
    return (ledger.stopped if ledger is not None else None) or "the watch's judge budget is used up for now"


def column_values(result: UnitResult) -> dict[str, float]:
    """column -> value of the result's scored values (repeat 0)."""
    found = {m.metric: m.value for m in result.metrics if m.repeat == 0 and m.value is not None}
    found.update({f"judge:{j.judge}": j.score for j in result.judgements if j.repeat == 0 and j.score is not None})
    return found
