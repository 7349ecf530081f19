"""The comparison of one or more runs: what ``compare``, ``run`` and the HTML report show, computed once.

Per run: the verdicts (:mod:`.verdicts`: cells with intervals, one paired procedure per pair), each system's
outputs and spending (:mod:`.usage`), its latency quantiles and the quality-cost-latency frontier
(:mod:`.latency`, with the quantile and cost of ``[evaluation] frontier``), the run-to-run spread of repeated
judges (:mod:`.variance`), and for a sequential run its decisions and savings (:mod:`.sequential_outcome`).
Columns that carry no information are hidden unless asked for: in a comparison of several systems, a metric equal
on every system and sample; token and cost columns that are 0 for every system; evaluation columns when no metric
or judge called a model. :attr:`Comparison.hidden` says what was hidden and why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..config.frontier_options import FrontierSettings, frontier_settings
from .latency import Frontier, LatencyStats, frontier, frontier_inputs, latency_stats, quality_metric
from .sequential_outcome import SequentialOutcome, sequential_outcome
from .usage import RunTotals, SystemUsage, run_totals, system_usage
from .variance import SpreadRow, run_spreads
from .verdicts import CellStats, Verdicts, decide


@dataclasses.dataclass(frozen=True)
class ComparisonRow:
    """One system of one run: its cells (mean, interval, n, unscored per column) and its usage."""

    run_id: str
    system: str
    cells: dict[str, CellStats]
    usage: SystemUsage

    @property
    def failed(self) -> int:
        return self.usage.failed

    @property
    def retrievals(self) -> int:
        return self.usage.retrievals


@dataclasses.dataclass(frozen=True)
class RunComparison:
    """What one run adds below the table: verdicts, latency, frontier, run-to-run spread, totals."""

    run_id: str
    verdicts: Verdicts
    latency: list[LatencyStats]
    frontier: Frontier | None
    spreads: list[SpreadRow]
    totals: RunTotals
    sequential: SequentialOutcome | None = None  # a sequential run: its decisions and savings


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Rows (systems, possibly of several runs), the columns shown, and what was hidden with the reason."""

    rows: list[ComparisonRow]
    columns: list[str]
    directions: dict[str, str]
    runs: list[RunComparison]
    hidden: dict[str, str]  # column or column group -> why it is hidden
    show_tokens: bool = True
    show_evaluation: bool = True

    def direction(self, column: str) -> str:
        """Whether a higher or a lower value of ``column`` is better."""
        return self.directions.get(column, "higher")

    def best(self, column: str) -> float | None:
        """The best mean of ``column`` by its direction, None when no row has one."""
        cells = [row.cells.get(column) for row in self.rows]
        means = [cell.mean for cell in cells if cell is not None and cell.mean is not None]
        if not means:
            return None
        return max(means) if self.directions.get(column, "higher") == "higher" else min(means)

    @property
    def several(self) -> bool:
        """Whether the rows come from more than one run."""
        return len(self.runs) > 1


def compare(
    runs: Sequence,
    *,
    baseline: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    family: Sequence[str] | None = None,
    all_columns: bool = False,
    frontier: FrontierSettings | None = None,
) -> Comparison:
    """The comparison of ``runs`` (:class:`ragassay.results.RunData`, in order); ``frontier``: what the frontiers
    compare (default: each run's stored ``[evaluation] frontier``)."""
    rows, parts, columns, directions = [], [], [], {}
    for run in runs:
        verdicts = decide(run, baseline=baseline, alpha=alpha, seed=seed, family=family)
        cells = {(c.system, c.metric): c for c in verdicts.cells}
        usages = [system_usage(run, system) for system in run.systems]
        for usage in usages:
            mine = {m: cell for (s, m), cell in cells.items() if s == usage.system}
            rows.append(ComparisonRow(run.id, usage.system, mine, usage))
        for column in run.columns:
            directions.setdefault(column, run.direction(column))
            if column not in columns:
                columns.append(column)
        latency = latency_stats(run, seed)
        parts.append(
            RunComparison(
                run.id,
                verdicts,
                latency,
                run_frontier(run, verdicts, usages, latency, settings=frontier),
                run_spreads(run, verdicts.baseline),
                run_totals(usages)[0],
                sequential_outcome(run, usages),
            )
        )
    return _with_hidden(rows, columns, directions, parts, all_columns)


def run_frontier(
    run, verdicts: Verdicts, usages: list[SystemUsage], latency: list[LatencyStats], metric=None, settings=None
):
    """The frontier of one run on ``metric`` (default: :func:`~ragassay.analysis.latency.quality_metric`, the first
    metric of the decision family), comparing the latency quantile and cost of ``settings`` (default: the run's
    stored ``[evaluation] frontier``); None when the run has one system or no column."""
    metric = metric or quality_metric(run.columns, verdicts.family, verdicts.constant)
    if metric is None or len(run.systems) < 2:
        return None
    settings = settings or frontier_settings(run.info.config)
    means = {c.system: c.mean for c in verdicts.cells if c.metric == metric}
    cost, at = frontier_inputs(usages, latency, settings)
    return frontier(run.systems, means, cost, at, metric=metric, direction=run.direction(metric), settings=settings)


def _with_hidden(rows, columns, directions, parts, all_columns: bool) -> Comparison:
    hidden: dict[str, str] = {}
    constant = {m for part in parts for m in part.verdicts.constant}
    declared = {m for part in parts for m in part.verdicts.family}
    shown = columns
    if not all_columns and len(rows) > 1:  # a single system's constant metric still tells its level
        shown = [c for c in columns if c not in constant or c in declared]
        for column in columns:
            if column not in shown:
                value = next(
                    (r.cells[column].mean for r in rows if r.cells.get(column) and r.cells[column].mean is not None),
                    None,
                )
                hidden[column] = (f"{value:.3f}" if value is not None else "the same value") + (
                    " on every system and sample"
                )
    tokens = all_columns or any(_spent(r.usage) for r in rows)
    evaluation = all_columns or any(r.usage.evaluation.calls or r.usage.evaluation.cache_hits for r in rows)
    if not tokens:
        hidden["tokens and cost"] = "no system used a token"
    if not evaluation:
        hidden["eval calls and cost"] = "no metric or judge called a model"
    return Comparison(rows, shown, directions, parts, hidden, tokens, evaluation)


def _spent(usage: SystemUsage) -> bool:
    return bool(usage.input_tokens or usage.output_tokens or usage.calls or usage.cache_hits or usage.cost_usd)
