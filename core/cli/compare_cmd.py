"""``ragassay compare``: systems x metrics side by side for stored runs (ragassay.analysis.comparison)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, fmt, format_option, get_run, open_results, output_format
from .render import Column, Table, emit
from .verdict_view import print_verdicts, verdict_options

LEGEND = (
    "cells: mean over scored outputs (n scored) and its 95% bootstrap interval [low, high]; +Nu: N outputs "
    "unscored; bold green: best in its column "
    "(by the metric's direction); failed: failed outputs (+N missing: not run yet); retrieved: outputs with a "
    "non-empty retrieved context / outputs; eval: model calls and cost of the metrics and judges"
)


@click.command("compare")
@click.argument("runs", nargs=-1, required=True)
@config_option
@db_option
@click.option(
    "--against",
    "against",
    default=None,
    metavar="SYSTEM",
    help="Also show each system's paired difference to SYSTEM (same run) with a 95% bootstrap interval.",
)
@verdict_options
@format_option
def compare_command(
    runs: tuple[str, ...], config_path: Path, db: str | None, against: str | None, fmt: str | None, **settings
) -> None:
    """Systems x metrics side by side for one or more RUNS (ids or unique prefixes), then the verdicts.

    Each cell: mean over scored outputs, n (scored count) and a 95% bootstrap interval; unscored outputs are
    counted separately. The verdicts compare every system of a run with its baseline (first system, or
    --baseline) on the samples both scored: paired permutation test, Holm-adjusted (docs/statistics.md).
    """
    from .paired_view import paired_table
    from .verdict_view import verdicts_of, verdicts_table

    fmt = output_format(fmt)
    explain, compact = settings.pop("explain"), settings.pop("compact")
    store = open_results(config_path, db, runs)
    try:
        run_ids = [get_run(store, run)["id"] for run in runs]
        verdicts = verdicts_of(store, run_ids, **settings)
        tables = [comparison_table(store, run_ids, verdicts)]
        if against is not None:
            tables += [paired_table(store, run_id, against) for run_id in run_ids]
        tables += variance_tables(store, run_ids, against)
    finally:
        store.close()
    out = console(no_color=compact or None)
    if fmt != "rich":
        emit(out, [*tables, verdicts_table(verdicts)], fmt)
        return
    emit(out, tables, fmt, compact=compact)
    print_verdicts(out, verdicts, explain=explain)


def print_comparison(out, store, run_ids: list[str], *, variance: bool = False, baseline: str | None = None) -> None:
    """Render the comparison table of ``run_ids`` to ``out`` (a rich console); with ``variance``, then the
    run-to-run spread of runs that have repeats; then the verdict block of each run (against ``baseline``, by
    default each run's first system)."""
    from .verdict_view import verdicts_of

    verdicts = verdicts_of(store, run_ids, baseline=baseline)
    tables = [comparison_table(store, run_ids, verdicts), *(variance_tables(store, run_ids) if variance else [])]
    emit(out, tables, "rich")
    print_verdicts(out, verdicts)


def variance_tables(store, run_ids: list[str], against: str | None = None) -> list[Table]:
    """The run-to-run spread tables of those ``run_ids`` that were scored with ``--repeat N``."""
    from .variance_view import variance_tables as tables

    return tables(store, run_ids, against)


def comparison_table(store, run_ids: list[str], verdicts: list | None = None) -> Table:
    """The comparison of ``run_ids`` (:func:`ragassay.analysis.comparison.summarize_runs`) as a table, with each
    cell's bootstrap interval from ``verdicts`` (:func:`ragassay.analysis.verdicts.decide` of each run)."""
    from ..analysis.comparison import summarize_runs
    from .verdict_view import verdicts_of

    comparison = summarize_runs(store, run_ids)
    intervals = {
        (v.run_id, cell.system, cell.metric): cell
        for v in (verdicts_of(store, run_ids) if verdicts is None else verdicts)
        for cell in v.cells
    }
    several = len({row.run_id for row in comparison.rows}) > 1
    columns = [
        Column("system", show=lambda r: f"{r['run'][:8]}/{r['system']}" if several else r["system"]),
        Column("run", in_text=False),
    ]
    for name in comparison.columns:
        columns += [
            Column(name, numeric=True, show=lambda r, name=name: _cell(r, name)),
            Column(f"{name} ci_low", numeric=True, in_text=False),
            Column(f"{name} ci_high", numeric=True, in_text=False),
            Column(f"{name} n", numeric=True, in_text=False),
            Column(f"{name} unscored", numeric=True, in_text=False),
        ]
    columns += _usage_columns()
    rows = [_row(row, comparison.columns, intervals) for row in comparison.rows]
    emphasis = set()
    for name in comparison.columns:
        best = comparison.best(name)
        emphasis |= {
            (i, name)
            for i, r in enumerate(rows)
            if best is not None and r[name] is not None and abs(r[name] - best) < 1e-12
        }
    return Table(
        "comparison: mean (n scored) [95% CI]", columns, rows, [LEGEND, *_footnotes(comparison.rows, several)], emphasis
    )


def _usage_columns() -> list[Column]:
    def tokens(r: dict) -> str:
        return "/".join(fmt(r[k], 0) for k in ("input tokens", "output tokens", "cached tokens"))

    return [
        Column(
            "failed",
            numeric=True,
            show=lambda r: f"{r['failed']}" + (f" +{r['missing']} missing" if r["missing"] else ""),
        ),
        Column("missing", numeric=True, in_text=False),
        Column("retrieved", numeric=True, show=lambda r: f"{r['retrieved']}/{r['answered']}"),
        Column("answered", numeric=True, in_text=False),
        Column("latency s", numeric=True, digits=4),
        Column("tokens in/out/cached", numeric=True, show=tokens, in_data=False),
        Column("input tokens", numeric=True, in_text=False),
        Column("output tokens", numeric=True, in_text=False),
        Column("cached tokens", numeric=True, in_text=False),
        Column("cost $", numeric=True, digits=4, show=lambda r: "?" if r["cost $"] is None else f"{r['cost $']:.4f}"),
        Column("eval calls", numeric=True),
        Column("eval tokens in", numeric=True, in_text=False),
        Column("eval tokens out", numeric=True, in_text=False),
        Column(
            "eval cost $",
            numeric=True,
            digits=4,
            show=lambda r: "?" if r["eval cost $"] is None else f"{r['eval cost $']:.4f}",
        ),
    ]


def _row(row, columns: list[str], intervals: dict) -> dict:
    values = {"system": row.system, "run": row.run_id}
    for name in columns:
        cell = row.cells[name]
        stats = intervals.get((row.run_id, row.system, name))
        low, high = (None, None) if stats is None else (stats.ci_low, stats.ci_high)
        values.update(
            {name: cell.mean, f"{name} ci_low": low, f"{name} ci_high": high, f"{name} n": cell.n}
            | {f"{name} unscored": cell.unscored}
        )
    values.update(
        {
            "failed": row.failed,
            "missing": row.missing,
            "retrieved": row.retrievals,
            "answered": row.outputs - row.failed,
            "latency s": row.mean_latency_s,
            "input tokens": row.mean_input_tokens,
            "output tokens": row.mean_output_tokens,
            "cached tokens": row.mean_cached_tokens,
            "cost $": row.cost_usd,
            "eval calls": row.evaluation.calls,
            "eval tokens in": row.evaluation.input_tokens,
            "eval tokens out": row.evaluation.output_tokens,
            "eval cost $": row.evaluation.cost_usd,
        }
    )
    return values


def _cell(row: dict, name: str) -> str:
    mean, n, unscored = row[name], row[f"{name} n"], row[f"{name} unscored"]
    if mean is None:
        return f"- ({unscored} unscored)" if unscored else "-"
    low, high = row[f"{name} ci_low"], row[f"{name} ci_high"]
    interval = "\n[no CI]" if low is None else f"\n[{low:.3f}, {high:.3f}]"
    return f"{mean:.3f} ({n})" + (f" +{unscored}u" if unscored else "") + interval


def _footnotes(rows, several: bool) -> list[str]:
    """Where tokens and cost come from; why a cost is '?'."""
    from ..analysis.comparison import run_totals
    from ..llm.pricing import PRICES_AS_OF

    notes = []
    if any(row.evaluation.calls or row.evaluation.cache_hits for row in rows):
        for totals in run_totals(rows):
            e = totals.evaluation
            cost = "?" if e.cost_usd is None else f"{e.cost_usd:.4f}"
            notes.append(
                f"evaluation cost, run {totals.run_id[:8]} (metrics and judges, not the systems): "
                f"{e.input_tokens} input and {e.output_tokens} output tokens, {e.calls} model calls, "
                f"{e.cache_hits} cached replies, cost $ {cost}"
                + (f" (no price for {', '.join(e.unpriced)})" if e.unpriced else "")
            )
    if any(row.mean_input_tokens or row.mean_output_tokens for row in rows):
        hits = sum(row.cache_hits for row in rows)
        notes.append(
            f"tokens: mean per sample (input/output/provider-cached input); cost $: total per system at "
            f"list prices as of {PRICES_AS_OF} plus [llm.prices]"
            + (
                f"; {hits} responses came from the response cache (no call made, cost counted as if made)"
                if hits
                else ""
            )
        )
        for totals in run_totals(rows):
            total = "?" if totals.cost_usd is None else f"{totals.cost_usd:.4f}"
            notes.append(
                f"run {totals.run_id[:8]}: {totals.input_tokens} input and {totals.output_tokens} output "
                f"tokens, {totals.calls} model calls, {totals.cache_hits} cached replies, cost $ {total}"
            )
    for row in rows:
        if row.cost_usd is None:
            label = f"{row.run_id[:8]}/{row.system}" if several else row.system
            example = row.unpriced_models[0].rpartition("/")[2] if row.unpriced_models else "MODEL"
            notes.append(
                f"? {label}: no price for {', '.join(row.unpriced_models)}; add one to the config, e.g. "
                f'[llm.prices."{example}"] input_per_million = ..., output_per_million = ... (USD)'
            )
    return notes


COMMANDS = [compare_command]
