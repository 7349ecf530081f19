"""Aggregating stored results into a systems x metrics comparison (used by ``run`` and ``compare``)."""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections import defaultdict

from ..models import TokenUsage
from ..store.database import ResultsStore


@dataclasses.dataclass
class Cell:
    """One system x metric cell: mean over scored values, how many were scored and unscored."""

    mean: float | None
    n: int
    unscored: int


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
    retrievals: int = 0  # ok outputs for which the system retrieved (the agent's decision, for agents)

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

    @property
    def columns(self) -> list[str]:
        return self.metrics + [f"judge:{j}" for j in self.judges]


def summarize_runs(store: ResultsStore, run_ids: list[str]) -> Comparison:
    """Aggregate each run's systems; metric columns in first-seen order."""
    rows: list[SystemRow] = []
    metrics: list[str] = []
    judges: list[str] = []
    for run_id in run_ids:
        run = store.get_run(run_id)
        rows += _run_rows(store, run, metrics, judges)
    return Comparison(rows, metrics, judges)


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
    usages: dict[str, list[TokenUsage]] = defaultdict(list)
    retrievals: dict[str, int] = defaultdict(int)
    for system_name, _, output in store.output_payloads(run["id"]):
        usages[system_name].append(output.usage)
        retrievals[system_name] += output.retrieved is True
    prices = _price_table(run)
    rows = []
    for system in store.run_systems(run["id"]):
        name = system["name"]
        outs = outputs.get(name, [])
        ok = [o for o in outs if o["status"] == "ok"]
        columns = metrics + [f"judge:{j}" for j in judges]
        cells = {c: Cell(_mean(values.get((name, c), [])), len(values.get((name, c), [])),
                         unscored.get((name, c), 0)) for c in columns}
        rows.append(SystemRow(
            run["id"], name, run["sample_count"], len(outs), len(outs) - len(ok), cells,
            _mean([o["latency_s"] for o in ok if o["latency_s"] is not None]),
            _mean([o["input_tokens"] for o in ok]), _mean([o["output_tokens"] for o in ok]),
            retrievals=retrievals.get(name, 0), **_accounting(usages.get(name, []), prices),
        ))
    return rows


def _price_table(run: dict):
    """Built-in prices extended by the run's own ``[llm.prices]``."""
    from ..llm.pricing import PriceTable

    config = json.loads(run.get("config_json") or "{}")
    return PriceTable((config.get("llm") or {}).get("prices") or {})


def _accounting(usages: list[TokenUsage], prices) -> dict:
    """Mean cached tokens, total cost (None if any model is unpriced), unpriced models, calls, cache hits."""
    total = sum(usages, TokenUsage())
    unpriced = prices.unpriced(total)
    if not total.by_model and (total.input_tokens or total.output_tokens):
        unpriced = ["(tokens reported without a model)"]
    return {"mean_cached_tokens": _mean([u.cached_tokens for u in usages]),
            "cost_usd": None if unpriced else prices.cost(total), "unpriced_models": unpriced,
            "calls": total.calls, "cache_hits": total.cache_hits, "input_tokens": total.input_tokens,
            "output_tokens": total.output_tokens}


@dataclasses.dataclass
class RunTotals:
    """Token, call and cost totals of one run's systems."""

    run_id: str
    input_tokens: int
    output_tokens: int
    calls: int
    cache_hits: int
    cost_usd: float | None  # None when any system has an unpriced model


def run_totals(rows: list[SystemRow]) -> list[RunTotals]:
    """Totals per run over ``rows`` (runs in first-seen order)."""
    totals = []
    for run_id in dict.fromkeys(row.run_id for row in rows):
        mine = [row for row in rows if row.run_id == run_id]
        costs = [row.cost_usd for row in mine]
        totals.append(RunTotals(run_id, sum(r.input_tokens for r in mine), sum(r.output_tokens for r in mine),
                                sum(r.calls for r in mine), sum(r.cache_hits for r in mine),
                                None if None in costs else sum(costs)))
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
