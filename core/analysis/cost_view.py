"""The cost view of a run: per system, quality next to what it cost (the boolean-agent trade-off).

Kenneweg et al. (``shared/seeds/003``, Tables II and III) compare a naive RAG with a boolean agent RAG by answer
quality and the input and output tokens each spent on the dataset: an agent that skips retrieval saves tokens,
at some cost in quality. Per system this view gives the quality (mean of one metric or judge, with its 95%
bootstrap interval), the system's input and output tokens, model calls, cost in dollars and mean latency, the
evaluation's own cost (metric and judge model calls), and

- **quality per dollar** = mean quality / mean cost per answered sample (cost_usd / ok outputs);
- **tokens saved** = baseline tokens - system tokens (input + output, totals over ok outputs), and as a share
  of the baseline's; positive means the system spent fewer.

A cost is a number only when every model used has a price: unpriced models make it unknown (None, with the
models named), never 0. A system that made no priced call at all costs $0 and has no quality per dollar. The view
also carries each system's latency quantiles and the quality-cost-latency frontier (:mod:`.latency`; the
latency quantile and the cost, dollars or tokens per answer, of ``[evaluation] frontier``). Quality is
judged by the metric the comparison's frontier uses (:func:`~ragassay.analysis.latency.quality_metric`: the first
of the decision family, never a metric constant on every system and sample), so both say the same.
"""

from __future__ import annotations

import dataclasses

from ..config.frontier_options import FrontierSettings, frontier_settings
from ..errors import ConfigError
from .bootstrap import UNITXT_SEED, bootstrap_mean_ci
from .breakdown import check_metrics
from .latency import Frontier, LatencyStats, frontier, frontier_inputs, latency_stats, quality_metric
from .usage import SystemUsage, system_usage


@dataclasses.dataclass(frozen=True)
class CostRow:
    """One system's quality and costs; a None cost or ratio comes with ``notes`` saying why."""

    system: str
    quality: float | None
    quality_ci_low: float | None
    quality_ci_high: float | None
    quality_n: int  # scored samples
    outputs: int  # ok outputs
    input_tokens: int
    output_tokens: int
    calls: int
    cost_usd: float | None
    mean_latency_s: float | None
    eval_cost_usd: float | None
    quality_per_dollar: float | None
    tokens_saved: int | None
    tokens_saved_share: float | None
    notes: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class CostView:
    """Quality next to cost for each system of a run, the latency quantiles and the frontier."""

    run_id: str
    metric: str
    baseline: str
    rows: list[CostRow]
    latency: list[LatencyStats]
    frontier: Frontier | None


def cost_view(
    run,
    metric: str | None = None,
    baseline: str | None = None,
    *,
    seed: int = UNITXT_SEED,
    latency: list[LatencyStats] | None = None,
    settings: FrontierSettings | None = None,
) -> CostView:
    """The cost view of ``run`` (:class:`ragassay.results.RunData`).

    ``metric`` defaults to the frontier's (:func:`~ragassay.analysis.latency.quality_metric` over the run's stored
    decision family); ``baseline`` to the first system.
    ``latency``: the run's :func:`~ragassay.analysis.latency.latency_stats` with the same ``seed`` when already
    computed (``compare`` has them), else computed here. ``settings``: the frontier's latency quantile and cost
    (default: the run's stored ``[evaluation] frontier``).
    """
    columns = run.columns
    if not columns:
        raise ConfigError("this run scored no metric and no judge, so there is no quality to set against cost")
    metric = check_metrics(columns, [metric])[0] if metric else _default_metric(run)
    systems = run.systems
    baseline = baseline or systems[0]
    if baseline not in systems:
        raise ConfigError(f"--baseline '{baseline}' is not a system of this run; its systems: {', '.join(systems)}")
    usages = {system: system_usage(run, system) for system in systems}
    base = usages[baseline]
    base_tokens = base.input_tokens + base.output_tokens
    qualities = {s: _quality(run, s, metric, seed) for s in systems}
    rows = [_row(usages[s], qualities[s], base_tokens, s == baseline) for s in systems]
    latency = latency_stats(run, seed) if latency is None else latency
    settings = settings or frontier_settings(run.info.config)
    cost, at = frontier_inputs([usages[s] for s in systems], latency, settings)
    quality = {s: qualities[s].mean for s in systems}
    points = frontier(systems, quality, cost, at, metric=metric, direction=run.direction(metric), settings=settings)
    return CostView(run.id, metric, baseline, rows, latency, points if len(systems) > 1 else None)


def _default_metric(run) -> str:
    from .verdicts import constant_columns, stored_family

    return quality_metric(run.columns, stored_family(run.info.config) or [], constant_columns(run))


def _quality(run, system: str, metric: str, seed: int):
    """The mean of ``metric`` with its interval; resampling conversations when the samples are their turns."""
    if not run.conversations:
        return bootstrap_mean_ci(run.values(system, metric), seed=seed)
    from .clustered import cluster_mean_ci, clusters_of

    return cluster_mean_ci(run.values(system, metric), clusters_of(run.clusters), seed=seed)[0]


def _row(usage: SystemUsage, quality, base_tokens: int, is_baseline: bool) -> CostRow:
    notes = []
    cost = usage.cost_usd
    if usage.unpriced_models:
        notes.append(f"cost unknown: no price for {', '.join(usage.unpriced_models)}")
    eval_cost = usage.evaluation.cost_usd
    if usage.evaluation.unpriced:
        notes.append(f"evaluation cost unknown: no price for {', '.join(usage.evaluation.unpriced)}")
    outputs = usage.answered
    per_dollar = None
    if cost is not None and cost > 0 and outputs and quality.mean is not None:
        per_dollar = quality.mean / (cost / outputs)
    elif cost == 0:
        notes.append("no priced model call: quality per dollar is undefined")
    tokens = usage.input_tokens + usage.output_tokens
    saved = None if is_baseline else base_tokens - tokens
    share = None if is_baseline or not base_tokens else saved / base_tokens
    return CostRow(
        system=usage.system,
        quality=quality.mean,
        quality_ci_low=quality.ci_low,
        quality_ci_high=quality.ci_high,
        quality_n=quality.n_scored,
        outputs=outputs,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        calls=usage.calls,
        cost_usd=cost,
        mean_latency_s=usage.mean_latency_s,
        eval_cost_usd=eval_cost,
        quality_per_dollar=per_dollar,
        tokens_saved=saved,
        tokens_saved_share=share,
        notes=notes,
    )
