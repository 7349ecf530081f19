"""Aggregating stored results into a systems x metrics comparison (used by ``run`` and ``compare``)."""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections import defaultdict

from ..store.database import ResultsStore


@dataclasses.dataclass
class Cell:
    """One system x metric cell: mean over scored values, how many were scored and unscored."""

    mean: float | None
    n: int
    unscored: int


@dataclasses.dataclass
class EvaluationCost:
    """What scoring one system's outputs cost: the model calls of its metrics and judges (not the system's own)."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float | None = 0.0  # None when a model used by a metric or judge has no price
    unpriced: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class SystemRow:
    """One system's results in one run."""

    run_id: str
    system: str
    samples: int
    outputs: int
    failed: int
    cells: dict[str, Cell]
    mean_latency_s: float | None
    mean_input_tokens: float | None
    mean_output_tokens: float | None
    mean_cached_tokens: float | None = None
    cost_usd: float | None = None  # total over ok outputs at list price; None when a model has no price
    unpriced_models: list[str] = dataclasses.field(default_factory=list)
    calls: int = 0  # model calls made
    cache_hits: int = 0  # responses served from the LLM response cache
    input_tokens: int = 0  # totals over ok outputs
    output_tokens: int = 0
    retrievals: int = 0  # ok outputs that came back with at least one non-empty retrieved context
    evaluation: EvaluationCost = dataclasses.field(default_factory=lambda: EvaluationCost())

    @property
    def missing(self) -> int:
        """Samples with no stored output (run interrupted)."""
        return self.samples - self.outputs


@dataclasses.dataclass
class Comparison:
    """Rows (systems, possibly from several runs) and columns (metrics, then judges)."""

    rows: list[SystemRow]
    metrics: list[str]
    judges: list[str]
    directions: dict[str, str] = dataclasses.field(default_factory=dict)  # column -> "higher" | "lower"

    def direction(self, column: str) -> str:
        """Whether a higher or a lower value of ``column`` is better (judges: higher)."""
        return self.directions.get(column, "higher")

    def best(self, column: str) -> float | None:
        """The best mean of ``column`` by its direction, None when no row has one."""
        means = [row.cells[column].mean for row in self.rows if row.cells[column].mean is not None]
        if not means:
            return None
        return max(means) if self.direction(column) == "higher" else min(means)

    @property
    def columns(self) -> list[str]:
        return self.metrics + [f"judge:{j}" for j in self.judges]


def summarize_runs(store: ResultsStore, run_ids: list[str]) -> Comparison:
    """Aggregate each run's systems; metric columns in first-seen order."""
    rows: list[SystemRow] = []
    metrics: list[str] = []
    judges: list[str] = []
    directions: dict[str, str] = {}
    for run_id in run_ids:
        run = store.get_run(run_id)
        rows += _run_rows(store, run, metrics, judges)
        spec = json.loads(run["spec_json"])
        for label, metric in (spec.get("metrics") or {}).items():
            directions.setdefault(label, (metric.get("traits") or {}).get("direction", "higher"))
    return Comparison(rows, metrics, judges, directions)


def _run_rows(store: ResultsStore, run: dict, metrics: list[str], judges: list[str]) -> list[SystemRow]:
    spec = json.loads(run["spec_json"])
    for name in spec.get("metrics", {}):  # configured order first
        _note(metrics, name)
    for name in spec.get("judges", {}):
        _note(judges, name)
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    unscored: dict[tuple[str, str], int] = defaultdict(int)

    def add(system: str, column: str, value: float | None) -> None:
        if value is None:
            unscored[(system, column)] += 1
        else:
            values[(system, column)].append(value)

    for row in store.metric_rows(run["id"]):
        _note(metrics, row["metric"])
        add(row["system"], row["metric"], row["value"])
    for row in store.judgement_rows(run["id"]):
        _note(judges, row["judge"])
        add(row["system"], f"judge:{row['judge']}", row["score"])
    outputs: dict[str, list[dict]] = defaultdict(list)
    for row in store.output_rows(run["id"]):
        outputs[row["system"]].append(row)
    evaluation = store.evaluation_usage(run["id"])
    rows = []
    for system in store.run_systems(run["id"]):
        name = system["name"]
        outs = outputs.get(name, [])
        ok = [o for o in outs if o["status"] == "ok"]
        columns = metrics + [f"judge:{j}" for j in judges]
        cells = {
            c: Cell(_mean(values.get((name, c), [])), len(values.get((name, c), [])), unscored.get((name, c), 0))
            for c in columns
        }
        rows.append(
            SystemRow(
                run["id"],
                name,
                run["sample_count"],
                len(outs),
                len(outs) - len(ok),
                cells,
                _mean([o["latency_s"] for o in ok if o["latency_s"] is not None]),
                _mean([o["input_tokens"] for o in ok]),
                _mean([o["output_tokens"] for o in ok]),
                retrievals=sum(1 for o in ok if (o["retrieved_count"] or 0) > 0),
                **_accounting(ok),
                evaluation=_evaluation_cost(evaluation.get(name)),
            )
        )
    return rows


def _accounting(ok: list[dict]) -> dict:
    """Mean cached tokens, total cost (None if any model is unpriced), unpriced models, calls, cache hits."""
    unpriced = sorted({m.strip() for o in ok if o["unpriced"] for m in o["unpriced"].split(",")})
    return {
        "mean_cached_tokens": _mean([o["cached_tokens"] for o in ok]),
        "cost_usd": None if unpriced else sum(o["cost_usd"] or 0.0 for o in ok),
        "unpriced_models": unpriced,
        "calls": sum(o["calls"] for o in ok),
        "cache_hits": sum(o["cache_hits"] for o in ok),
        "input_tokens": sum(o["input_tokens"] for o in ok),
        "output_tokens": sum(o["output_tokens"] for o in ok),
    }


def _evaluation_cost(row: dict | None) -> EvaluationCost:
    if row is None:
        return EvaluationCost()
    unpriced = sorted({m.strip() for m in (row["unpriced"] or "").split(",") if m.strip()})
    return EvaluationCost(
        row["input_tokens"],
        row["output_tokens"],
        row["calls"],
        row["cache_hits"],
        None if unpriced else row["cost_usd"],
        unpriced,
    )


@dataclasses.dataclass
class RunTotals:
    """Token, call and cost totals of one run's systems."""

    run_id: str
    input_tokens: int
    output_tokens: int
    calls: int
    cache_hits: int
    cost_usd: float | None  # None when any system has an unpriced model
    evaluation: EvaluationCost = dataclasses.field(default_factory=EvaluationCost)  # of all metrics and judges


def run_totals(rows: list[SystemRow]) -> list[RunTotals]:
    """Totals per run over ``rows`` (runs in first-seen order)."""
    totals = []
    for run_id in dict.fromkeys(row.run_id for row in rows):
        mine = [row for row in rows if row.run_id == run_id]
        costs = [row.cost_usd for row in mine]
        evaluations = [r.evaluation for r in mine]
        eval_costs = [e.cost_usd for e in evaluations]
        evaluation = EvaluationCost(
            sum(e.input_tokens for e in evaluations),
            sum(e.output_tokens for e in evaluations),
            sum(e.calls for e in evaluations),
            sum(e.cache_hits for e in evaluations),
            None if None in eval_costs else sum(eval_costs),
            sorted({m for e in evaluations for m in e.unpriced}),
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


def per_sample_values(store: ResultsStore, run_id: str) -> dict[tuple[str, str], dict[str, float]]:
    """(system, column) -> {question_id: value} for every scored metric value and judgement of a run.

    Judge columns are named ``judge:<label>`` as in the comparison table.
    """
    values: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for row in store.metric_rows(run_id):
        if row["value"] is not None:
            values[(row["system"], row["metric"])][row["question_id"]] = row["value"]
    for row in store.judgement_rows(run_id):
        if row["score"] is not None:
            values[(row["system"], f"judge:{row['judge']}")][row["question_id"]] = row["score"]
    return values


def _note(seen: list[str], name: str) -> None:
    if name not in seen:
        seen.append(name)


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None
