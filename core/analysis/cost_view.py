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
models named), never 0. A system that made no priced call at all costs $0 and has no quality per dollar.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .bootstrap import UNITXT_SEED, bootstrap_mean_ci
from .breakdown import check_metrics

if TYPE_CHECKING:  # pragma: no cover
    from ..frames import RunFrames


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


def cost_view(
    frames: RunFrames, metric: str | None = None, baseline: str | None = None, *, seed: int = UNITXT_SEED
) -> dict[str, Any]:
    """The cost view of ``frames``: ``{"metric", "baseline", "rows": [CostRow as dict, ...]}``.

    ``metric`` defaults to the run's first metric (else its first judge); ``baseline`` to the first system.
    """
    scores = frames.scores()
    columns = list(scores.columns)
    if not columns:
        raise ConfigError("this run scored no metric and no judge, so there is no quality to set against cost")
    metric = check_metrics(columns, [metric] if metric else None)[0]
    systems = frames.run["systems"]
    baseline = baseline or systems[0]
    if baseline not in systems:
        raise ConfigError(f"--baseline '{baseline}' is not a system of this run; its systems: {', '.join(systems)}")
    costs = frames.costs
    base_tokens = int(costs.loc[baseline, "input_tokens"] + costs.loc[baseline, "output_tokens"])
    rows = [_row(frames, scores, metric, system, base_tokens, system == baseline, seed) for system in systems]
    return {"metric": metric, "baseline": baseline, "rows": [dataclasses.asdict(r) for r in rows]}


def _row(frames, scores, metric: str, system: str, base_tokens: int, is_baseline: bool, seed: int) -> CostRow:
    import math

    c = frames.costs.loc[system]
    quality = bootstrap_mean_ci(scores.loc[system][metric].to_numpy(), seed=seed)
    notes = []
    cost = _known(c["cost_usd"])
    if c["unpriced_models"]:
        cost = None
        notes.append(f"cost unknown: no price for {c['unpriced_models']}")
    eval_cost = None if c["eval_unpriced_models"] else _known(c["eval_cost_usd"])
    if c["eval_unpriced_models"]:
        notes.append(f"evaluation cost unknown: no price for {c['eval_unpriced_models']}")
    outputs = int(c["outputs"] - c["failed"])
    per_dollar = None
    if cost is not None and cost > 0 and outputs and quality.mean is not None:
        per_dollar = quality.mean / (cost / outputs)
    elif cost == 0:
        notes.append("no priced model call: quality per dollar is undefined")
    tokens = int(c["input_tokens"] + c["output_tokens"])
    saved = None if is_baseline else base_tokens - tokens
    share = None if is_baseline or not base_tokens else saved / base_tokens
    latency = c["mean_latency_s"]
    return CostRow(
        system=system,
        quality=quality.mean,
        quality_ci_low=quality.ci_low,
        quality_ci_high=quality.ci_high,
        quality_n=quality.n_scored,
        outputs=outputs,
        input_tokens=int(c["input_tokens"]),
        output_tokens=int(c["output_tokens"]),
        calls=int(c["calls"]),
        cost_usd=cost,
        mean_latency_s=None if latency is None or math.isnan(latency) else float(latency),
        eval_cost_usd=eval_cost,
        quality_per_dollar=per_dollar,
        tokens_saved=saved,
        tokens_saved_share=share,
        notes=notes,
    )


def _known(value: Any) -> float | None:
    import math

    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)
