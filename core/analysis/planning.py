"""``ragassay plan``: the power figures of a stored run, from the read model (:mod:`.power` holds the formulas).

For each metric and each system against the baseline, on the samples both scored: n, the SD of the per-sample
differences and the minimum detectable effect (MDE); with an effect, the samples it needs. A run with one
system gets the unpaired figures for comparing a future system on new samples. When the samples are turns of
conversations, the figures count conversations (:func:`ragassay.analysis.power.clustered_estimate`).
"""

from __future__ import annotations

import dataclasses

from ..errors import ConfigError
from .clustered import turns_in
from .power import PlanRow, PowerSettings, check_settings, comparisons, most_constrained, plan


@dataclasses.dataclass(frozen=True)
class Plan:
    """The power figures of one run, the settings they were computed with, and the closing sentence."""

    run_id: str
    baseline: str | None
    paired: bool
    settings: PowerSettings
    rows: list[PlanRow]
    summary: str


def plan_of(
    run, settings: PowerSettings, baseline: str | None = None, metrics: list[str] = (), bonferroni: bool = False
) -> Plan:
    """The plan of ``run`` (:class:`ragassay.results.RunData`) over its repeat-0 values."""
    check_settings(settings)
    values = {(s, c): _scored(run, s, c) for s in run.systems for c in run.columns}
    known = [c for c in run.columns if any(values[(s, c)] for s in run.systems)]
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise ConfigError(
            f"run {run.id[:12]} has no scored metric '{unknown[0]}'. Its metrics: {', '.join(known) or 'none'}"
        )
    chosen = list(dict.fromkeys(metrics)) or known
    if bonferroni:
        settings = dataclasses.replace(settings, comparisons=comparisons(run.systems, chosen))
    clusters = dict(zip(run.question_ids, run.clusters)) if run.conversations else None
    rows = plan(values, run.systems, chosen, settings, baseline, clusters)
    paired = len(run.systems) > 1
    first = rows[0].baseline if rows else None
    return Plan(run.id, first, paired, settings, rows, closing_sentence(rows))


def _scored(run, system: str, column: str) -> dict[str, float]:
    import math

    return {q: float(v) for q, v in zip(run.question_ids, run.values(system, column)) if not math.isnan(v)}


def closing_sentence(rows: list[PlanRow]) -> str:
    """The most constrained metric (:func:`ragassay.analysis.power.most_constrained`) in words."""
    row = most_constrained(rows)
    if row is None:
        return "No metric varies across the samples: nothing to plan from. Score more (or more varied) samples."
    e = row.estimate
    pair = f"{row.system} vs {row.baseline}" if row.baseline else f"{row.system}, unpaired"
    have = f"{e.n} samples" if e.n_clusters is None else turns_in(e.n, e.n_clusters)
    sentence = (
        f"Most constrained: {e.metric} ({pair}): with {have}, differences below {e.mde:.3f} are unlikely to be detected"
    )
    if e.needed is None:
        return sentence + "."
    if e.needed_clusters is not None:
        return sentence + _conversations_needed(e, bool(row.baseline))
    unit = "samples" if row.baseline else "samples per system"
    if e.needed <= e.n:
        return sentence + f"; {e.n} {unit} are already enough to detect {e.effect:g}."
    return sentence + f"; detecting {e.effect:g} would need {e.needed} {unit} ({e.needed - e.n} more)."


def _conversations_needed(e, paired: bool) -> str:
    """The conversations an effect needs (turns of conversations), with the turns they hold."""
    unit = "conversations" if paired else "conversations per system"
    if e.needed_clusters <= e.n_clusters:
        return f"; {e.n_clusters} {unit} are already enough to detect {e.effect:g}."
    more = e.needed_clusters - e.n_clusters
    return f"; detecting {e.effect:g} would need {e.needed_clusters} {unit} (about {e.needed} turns; {more} more)."
