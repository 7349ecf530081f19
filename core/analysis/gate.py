"""The CI gate: a candidate run against a baseline run, system by system, with one pass/regression verdict.

Each system of the candidate run is paired with the system of the same name in the baseline run (which may
live in another results database, e.g. the main branch's results restored from a CI cache). On the samples
both runs hold (same ``question_id``), every metric and judge column both runs scored is compared with
:func:`ragassay.analysis.verdicts.decide_values`: the paired sign-flip permutation test, Holm's adjustment
over every (system, metric) pair of the gate at once, BCa bootstrap intervals and the MDE, exactly as
``ragassay compare`` (sources in :mod:`ragassay.analysis.verdicts` and docs/statistics.md). A pair whose
verdict is "worse" is a regression. Systems and metrics present on one side only are listed in ``notes``,
never dropped silently.

The same runs, metrics, alpha and seed give the same numbers in any process.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, DatasetError
from .comparison import SystemRow, summarize_runs
from .verdicts import NOT_COMPARABLE, WORSE, decide_values

EXIT_PASS, EXIT_REGRESSION, EXIT_ERROR = 0, 1, 2
BASELINE, CANDIDATE = "baseline", "candidate"  # the two sides given to decide_values


@dataclasses.dataclass(frozen=True)
class GateRow:
    """One system x metric: each side's mean over the shared samples, the paired difference and its verdict."""

    system: str
    metric: str
    direction: str  # "higher" | "lower": which is better
    baseline_mean: float | None
    baseline_unscored: int
    candidate_mean: float | None
    candidate_unscored: int
    n: int  # samples both sides scored
    mean_diff: float | None  # candidate - baseline
    ci_low: float | None
    ci_high: float | None
    p_holm: float | None
    verdict: str  # "better" | "worse" | "no detectable difference" | "not comparable"
    reason: str


@dataclasses.dataclass(frozen=True)
class Usage:
    """Tokens, model calls and USD of the systems' answers (generation) and of their scoring (evaluation)."""

    input_tokens: int
    output_tokens: int
    calls: int
    cost_usd: float | None  # None when a model has no price
    eval_input_tokens: int
    eval_output_tokens: int
    eval_calls: int
    eval_cost_usd: float | None
    unpriced: list[str]


@dataclasses.dataclass(frozen=True)
class Health:
    """One system's failed outputs, outputs not produced yet and unscored values, on both sides."""

    system: str
    baseline_failed: int
    candidate_failed: int
    baseline_missing: int
    candidate_missing: int
    baseline_unscored: int
    candidate_unscored: int


@dataclasses.dataclass(frozen=True)
class GateResult:
    """Everything the gate decided, and what it rests on."""

    candidate_run: str
    baseline_run: str
    baseline_source: str  # where the baseline run was found
    alpha: float
    seed: int
    method: str
    shared_samples: int
    candidate_only_samples: int
    baseline_only_samples: int
    rows: list[GateRow]
    notes: list[str]  # systems or metrics on one side only, and other things a reader must know
    cost_baseline: Usage
    cost_candidate: Usage
    health: list[Health]

    @property
    def regressions(self) -> list[GateRow]:
        """The pairs whose verdict is "worse"."""
        return [row for row in self.rows if row.verdict == WORSE]

    @property
    def compared(self) -> list[GateRow]:
        """The pairs that were tested (not "not comparable")."""
        return [row for row in self.rows if row.verdict != NOT_COMPARABLE]

    @property
    def exit_code(self) -> int:
        """0 when no pair is worse, 1 when any is."""
        return EXIT_REGRESSION if self.regressions else EXIT_PASS

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for ``--format json``)."""
        return dataclasses.asdict(self) | {"exit_code": self.exit_code, "regressions": len(self.regressions)}


def pick_baseline_run(store, candidate: dict, ref: str | None) -> dict:
    """The baseline run in ``store``: ``ref`` (id or unique prefix) when given, else the newest run with the
    candidate's config fingerprint, else the newest run of the candidate's project name."""
    if ref:
        return store.get_run(ref)
    same = store.find_run(candidate["fingerprint"])
    if same is not None:
        return store.get_run(same["id"])
    runs = store.list_runs()
    for run in runs:  # newest first
        if run["project"] == candidate["project"]:
            return store.get_run(run["id"])
    known = ", ".join(f"{r['id'][:12]} ({r['project']})" for r in runs[:10]) or "none"
    raise ConfigError(
        f"the baseline database has no run of project '{candidate['project']}' (runs: {known}). "
        f"Name one with --baseline PATH#RUN, or run the project on the main branch first."
    )


def gate(
    candidate_store,
    candidate_run: str,
    baseline_store,
    baseline_run: str,
    *,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    baseline_source: str = "",
) -> GateResult:
    """Compare stored run ``candidate_run`` with ``baseline_run`` (module docstring); ``metrics`` restricts the
    columns (default: every metric and judge column of either run).

    :raises ConfigError: no system in common, or a metric in neither run.
    :raises DatasetError: the runs share no sample.
    """
    cand_run, base_run = candidate_store.get_run(candidate_run), baseline_store.get_run(baseline_run)
    cand = summarize_runs(candidate_store, [cand_run["id"]])
    base = summarize_runs(baseline_store, [base_run["id"]])
    notes: list[str] = []
    systems = _common_systems(cand.rows, base.rows, notes)
    columns = _columns(cand.columns, base.columns, metrics, notes)
    shared, cand_only, base_only = _samples(candidate_store, cand_run, baseline_store, base_run)
    if cand_run["id"] == base_run["id"] and candidate_store.engine.url == baseline_store.engine.url:
        notes.append("the baseline is the candidate run itself: nothing can differ")
    keys = [(s, m) for s in systems for m in columns]
    values, unscored = _side_values(baseline_store, base_run["id"], BASELINE, keys, shared)
    cand_values, cand_unscored = _side_values(candidate_store, cand_run["id"], CANDIDATE, keys, shared)
    values.update(cand_values)
    unscored.update(cand_unscored)
    pseudo = [str(i) for i in range(len(keys))]  # one column per (system, metric): Holm over all of them
    directions = {p: cand.direction(m) for p, (_, m) in zip(pseudo, keys)}
    verdicts = decide_values(
        values, [BASELINE, CANDIDATE], pseudo, directions, baseline=BASELINE, alpha=alpha, seed=seed, unscored=unscored
    )
    rows = _rows(keys, pseudo, directions, verdicts)
    return GateResult(
        cand_run["id"],
        base_run["id"],
        baseline_source,
        alpha,
        seed,
        verdicts.method,
        len(shared),
        cand_only,
        base_only,
        rows,
        notes,
        _usage(base.rows, systems),
        _usage(cand.rows, systems),
        _health(cand.rows, base.rows, systems),
    )


def _common_systems(cand_rows: list[SystemRow], base_rows: list[SystemRow], notes: list[str]) -> list[str]:
    cand, base = [r.system for r in cand_rows], [r.system for r in base_rows]
    common = [s for s in cand if s in base]
    if not common:
        raise ConfigError(
            f"no system of the candidate run ({', '.join(cand)}) is in the baseline run ({', '.join(base)}). "
            f"The gate pairs systems by name: keep the names, or pick another baseline with --baseline."
        )
    for system in cand:
        if system not in base:
            notes.append(f"system {system} is new (not in the baseline run): not compared")
    for system in base:
        if system not in cand:
            notes.append(f"system {system} is only in the baseline run (removed?): not compared")
    return common


def _columns(cand: list[str], base: list[str], wanted: Sequence[str] | None, notes: list[str]) -> list[str]:
    everything = cand + [c for c in base if c not in cand]
    if wanted:
        unknown = [m for m in wanted if m not in everything]
        if unknown:
            raise ConfigError(
                f"--metric {', '.join(unknown)}: neither run has it. Metrics of the runs: {', '.join(everything)}"
            )
        everything = list(dict.fromkeys(wanted))
    for column in everything:
        if column not in base:
            notes.append(f"metric {column} is only in the candidate run: not compared")
        elif column not in cand:
            notes.append(f"metric {column} is only in the baseline run: not compared")
    columns = [c for c in everything if c in cand and c in base]
    if not columns:
        raise ConfigError("the candidate and baseline runs have no metric or judge in common: nothing to compare")
    return columns


def _samples(candidate_store, cand_run: dict, baseline_store, base_run: dict) -> tuple[set[str], int, int]:
    cand_ids = {s.question_id for s in candidate_store.run_samples(cand_run["id"])}
    base_ids = {s.question_id for s in baseline_store.run_samples(base_run["id"])}
    shared = cand_ids & base_ids
    if not shared:
        raise DatasetError(
            f"the candidate run {cand_run['id'][:12]} ({len(cand_ids)} samples) and the baseline run "
            f"{base_run['id'][:12]} ({len(base_ids)} samples) share no question_id, so no sample can be paired. "
            f"Gate against a run of the same dataset (--baseline PATH#RUN), or keep the question_ids stable."
        )
    return shared, len(cand_ids - base_ids), len(base_ids - cand_ids)


def _side_values(store, run_id: str, side: str, keys: list[tuple[str, str]], shared: set[str]):
    """(side, pseudo column) -> {question_id: value} over the shared samples, and the unscored counts."""
    index = {key: str(i) for i, key in enumerate(keys)}
    values: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    unscored: dict[tuple[str, str], int] = defaultdict(int)
    rows = [(r["system"], r["metric"], r["question_id"], r["value"]) for r in store.metric_rows(run_id)]
    rows += [(r["system"], f"judge:{r['judge']}", r["question_id"], r["score"]) for r in store.judgement_rows(run_id)]
    for system, column, question_id, value in rows:
        pseudo = index.get((system, column))
        if pseudo is None or question_id not in shared:
            continue
        if value is None:
            unscored[(side, pseudo)] += 1
        else:
            values[(side, pseudo)][question_id] = value
    return dict(values), dict(unscored)


def _rows(keys, pseudo, directions, verdicts) -> list[GateRow]:
    cells = {(c.system, c.metric): c for c in verdicts.cells}
    pairs = {p.metric: p for p in verdicts.pairs}
    rows = []
    for p, (system, metric) in zip(pseudo, keys):
        base, cand, pair = cells[(BASELINE, p)], cells[(CANDIDATE, p)], pairs[p]
        reason = pair.reason.replace(f"{CANDIDATE} and {BASELINE}", "the candidate and the baseline")
        rows.append(
            GateRow(
                system,
                metric,
                directions[p],
                base.mean,
                base.unscored,
                cand.mean,
                cand.unscored,
                pair.n,
                pair.mean_diff,
                pair.ci_low,
                pair.ci_high,
                pair.p_holm,
                pair.verdict,
                reason,
            )
        )
    return rows


def _usage(rows: list[SystemRow], systems: list[str]) -> Usage:
    mine = [r for r in rows if r.system in systems]
    costs = [r.cost_usd for r in mine]
    eval_costs = [r.evaluation.cost_usd for r in mine]
    unpriced = sorted({m for r in mine for m in [*r.unpriced_models, *r.evaluation.unpriced]})
    return Usage(
        sum(r.input_tokens for r in mine),
        sum(r.output_tokens for r in mine),
        sum(r.calls for r in mine),
        None if None in costs else sum(costs),
        sum(r.evaluation.input_tokens for r in mine),
        sum(r.evaluation.output_tokens for r in mine),
        sum(r.evaluation.calls for r in mine),
        None if None in eval_costs else sum(eval_costs),
        unpriced,
    )


def _health(cand_rows: list[SystemRow], base_rows: list[SystemRow], systems: list[str]) -> list[Health]:
    cand, base = {r.system: r for r in cand_rows}, {r.system: r for r in base_rows}
    return [
        Health(
            system,
            base[system].failed,
            cand[system].failed,
            base[system].missing,
            cand[system].missing,
            sum(cell.unscored for cell in base[system].cells.values()),
            sum(cell.unscored for cell in cand[system].cells.values()),
        )
        for system in systems
    ]


DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def parse_baseline(value: str) -> tuple[str | None, str | None]:
    """``--baseline`` as (database, run): ``RUN`` (an id or prefix in the project's own database) gives
    (None, RUN); a path or URL of another results database gives (PATH, None), and ``PATH#RUN`` (PATH, RUN).

    A value is a database when it has ``#``, ``://`` or a path separator, ends in .db/.sqlite/.sqlite3, or
    names an existing file.
    """
    import os
    from pathlib import Path

    value = value.strip()
    database, hash_sign, run = value.rpartition("#") if "#" in value else (value, "", "")
    separators = {"/", os.sep, *(os.altsep or "")}
    is_database = (
        bool(hash_sign)
        or "://" in database
        or any(sep in database for sep in separators)
        or database.lower().endswith(DATABASE_SUFFIXES)
        or Path(database).is_file()
    )
    if not database or (hash_sign and not run):
        raise ConfigError(
            f"--baseline {value!r} is incomplete: give a run id, a results database (path or URL), or PATH#RUN"
        )
    return (database, run or None) if is_database else (None, database)
