"""What each system of a run produced and spent: outputs, failures, retrievals, latency, tokens, calls and cost,
and the evaluation's own model calls (its metrics and judges), from the read model.

A cost is a number only when every model used has a price: an unpriced model makes it unknown (None, with the
models named), never 0. Responses served from the response cache count as if the call was made (list prices).
"""

from __future__ import annotations

import dataclasses
import statistics

from ..results.model import RunData
from ..results.usage import Usage


@dataclasses.dataclass(frozen=True)
class EvaluationCost:
    """What scoring one system's outputs cost: the model calls of its metrics and judges (not the system's own)."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float | None = 0.0  # None when a model used by a metric or judge has no price
    unpriced: list[str] = dataclasses.field(default_factory=list)
    reasoning_tokens: int = 0  # of output_tokens: what reasoning judge models spent thinking


@dataclasses.dataclass(frozen=True)
class SystemUsage:
    """One system's outputs and spending in one run (totals over ok outputs, means per ok output)."""

    run_id: str
    system: str
    samples: int
    outputs: int
    failed: int
    retrievals: int  # ok outputs that came back with at least one non-empty retrieved context
    mean_latency_s: float | None
    mean_input_tokens: float | None
    mean_output_tokens: float | None
    mean_cached_tokens: float | None
    input_tokens: int
    output_tokens: int
    calls: int
    cache_hits: int
    cost_usd: float | None  # at list price; None when a model has no price
    unpriced_models: list[str]
    evaluation: EvaluationCost

    @property
    def missing(self) -> int:
        """Samples with no stored output (the run was interrupted)."""
        return self.samples - self.outputs

    @property
    def answered(self) -> int:
        """Ok outputs."""
        return self.outputs - self.failed


@dataclasses.dataclass(frozen=True)
class RunTotals:
    """Token, call and cost totals of one run's systems, and of its evaluation."""

    run_id: str
    input_tokens: int
    output_tokens: int
    calls: int
    cache_hits: int
    cost_usd: float | None  # None when any system has an unpriced model
    evaluation: EvaluationCost


def system_usage(run: RunData, system: str) -> SystemUsage:
    """What ``system`` produced and spent in ``run``."""
    outs = [o for (s, _), o in run.outputs.items() if s == system]
    ok = [o for o in outs if o.ok]
    unpriced = sorted({m for o in ok for m in o.usage.unpriced})
    costs = [o.usage.cost_usd or 0.0 for o in ok]
    return SystemUsage(
        run_id=run.id,
        system=system,
        samples=run.info.sample_count,
        outputs=len(outs),
        failed=len(outs) - len(ok),
        retrievals=sum(1 for o in ok if (o.retrieved_count or 0) > 0),
        mean_latency_s=_mean([o.latency_s for o in ok if o.latency_s is not None]),
        mean_input_tokens=_mean([o.usage.input_tokens for o in ok]),
        mean_output_tokens=_mean([o.usage.output_tokens for o in ok]),
        mean_cached_tokens=_mean([o.usage.cached_tokens for o in ok]),
        input_tokens=sum(o.usage.input_tokens for o in ok),
        output_tokens=sum(o.usage.output_tokens for o in ok),
        calls=sum(o.usage.calls for o in ok),
        cache_hits=sum(o.usage.cache_hits for o in ok),
        cost_usd=None if unpriced else sum(costs),
        unpriced_models=unpriced,
        evaluation=evaluation_cost(run.evaluation_usages(system)),
    )


def evaluation_cost(usages: list[Usage]) -> EvaluationCost:
    """The sum of the metric values' and judgements' own usage."""
    unpriced = sorted({m for u in usages for m in u.unpriced})
    return EvaluationCost(
        sum(u.input_tokens for u in usages),
        sum(u.output_tokens for u in usages),
        sum(u.calls for u in usages),
        sum(u.cache_hits for u in usages),
        None if unpriced else sum(u.cost_usd or 0.0 for u in usages),
        unpriced,
        sum(u.reasoning_tokens for u in usages),
    )


def run_totals(rows: list[SystemUsage]) -> list[RunTotals]:
    """Totals per run over ``rows`` (runs in first-seen order)."""
    totals = []
    for run_id in dict.fromkeys(row.run_id for row in rows):
        mine = [row for row in rows if row.run_id == run_id]
        evaluations = [r.evaluation for r in mine]
        eval_costs = [e.cost_usd for e in evaluations]
        costs = [r.cost_usd for r in mine]
        evaluation = EvaluationCost(
            sum(e.input_tokens for e in evaluations),
            sum(e.output_tokens for e in evaluations),
            sum(e.calls for e in evaluations),
            sum(e.cache_hits for e in evaluations),
            None if None in eval_costs else sum(eval_costs),
            sorted({m for e in evaluations for m in e.unpriced}),
            sum(e.reasoning_tokens for e in evaluations),
        )
        totals.append(
            RunTotals(
                run_id,
                sum(r.input_tokens for r in mine),
                sum(r.output_tokens for r in mine),
                sum(r.calls for r in mine),
                sum(r.cache_hits for r in mine),
                None if None in costs else sum(costs),
                evaluation,
            )
        )
    return totals


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None
