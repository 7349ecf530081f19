"""Aggregating stored results into a systems x metrics comparison (used by ``run`` and ``compare``)."""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections import defaultdict

from .store.database import ResultsStore


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
        ))
    return rows


def _note(seen: list[str], name: str) -> None:
    if name not in seen:
        seen.append(name)


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None
