"""``ragassay breakdown`` (per-group statistics of a run) and ``ragassay cost`` (quality next to cost).

See docs/results.md, "Breakdowns and cost".
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, output_format
from .render import Column, Table, emit


def _load(run: str | None, config_path: Path, db: str | None):
    """The run ``run`` (default: the newest) read once."""
    from ..store.locate import pick_run
    from .common import open_results, read_runs

    store = open_results(config_path, db, (run,) if run else ())
    try:
        return read_runs(store, [run if run else pick_run(store)["id"]])[0]
    finally:
        store.close()


@click.command("breakdown")
@click.argument("run", required=False)
@click.option("--by", "by", required=True, help="Sample field to group by: group_id, metadata.KEY, an attribute.")
@click.option("--metric", "metrics", multiple=True, help="Metric or judge:LABEL to show (repeatable; default all).")
@click.option("--bins", type=int, default=None, help="Cut a numeric field into N quantile bins.")
@config_option
@db_option
@format_option
def breakdown_command(
    run: str | None, by: str, metrics: tuple[str, ...], bins: int | None, config_path: Path, db: str | None, fmt
) -> None:
    """Per-group statistics of RUN (id or unique prefix; default: the newest run).

    For each group of --by, system and metric: samples (n), scored, the group's share of the samples, the
    mean and its 95% bootstrap interval (BCa, seeded). Groups with fewer than 2 scored values get no interval.
    """
    from ..analysis.breakdown import breakdown

    fmt = output_format(fmt)
    data = _load(run, config_path, db)
    result = breakdown(data, by, list(metrics) or None, bins)
    emit(console(), [breakdown_table(result, data.id)], fmt, data=result.as_dict())


def breakdown_table(result, run_id: str) -> Table:
    """One row per (group, system, metric)."""
    columns = [
        Column("group"),
        Column("system"),
        Column("metric"),
        Column("n", numeric=True, show=lambda r: f"{r['n_scored']}/{r['n']}", in_data=False),
        Column("n_scored", numeric=True, in_text=False),
        Column("share", numeric=True, show=lambda r: f"{r['share']:.0%}"),
        Column("mean", numeric=True),
        Column("95% CI", show=_interval_text, in_data=False),
        Column("ci_low", numeric=True, in_text=False),
        Column("ci_high", numeric=True, in_text=False),
        Column("reason", in_text=False),
    ]
    rows = [dataclasses.asdict(row) for row in result.rows]
    title = f"breakdown of run {run_id[:12]} by {result.by}" + (
        f" ({result.bins} quantile bins)" if result.bins else ""
    )
    notes = ["n = scored/samples in the group; share = the group's share of the run's samples"]
    reasons = Counter(row.reason for row in result.rows if row.reason)
    notes += [f"no interval in {count} cell(s): {reason}" for reason, count in sorted(reasons.items())]
    return Table(title, columns, rows, notes + result.notes, id_columns=("group", "system", "metric"))


def _interval_text(row: dict) -> str:
    if row["ci_low"] is None:
        return "-"
    return f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


@click.command("cost")
@click.argument("run", required=False)
@click.option(
    "--metric",
    default=None,
    help="Quality metric or judge:LABEL (default: the frontier's, first of the decision family).",
)
@click.option("--baseline", default=None, help="System the tokens saved are counted against (default: the first).")
@config_option
@db_option
@format_option
def cost_command(run: str | None, metric: str | None, baseline: str | None, config_path: Path, db: str | None, fmt):
    """Quality next to cost for each system of RUN (default: the newest run).

    Quality (mean of --metric, 95% CI), the system's tokens in/out, calls, cost, mean and p50/p95 latency, the
    evaluation's own cost, quality per dollar, tokens saved against --baseline, and whether the system is on the
    quality-cost-latency frontier. Unpriced costs show as unknown, never 0.
    """
    from ..analysis.cost_view import cost_view
    from ..analysis.jsonable import jsonable

    fmt = output_format(fmt)
    view = cost_view(_load(run, config_path, db), metric, baseline)
    emit(console(), [cost_table(view)], fmt, data=jsonable(view) if fmt == "json" else None)


def cost_table(view) -> Table:
    """One row per system."""

    def money(key: str):
        return lambda r: "unknown" if r[key] is None else f"${r[key]:.4f}"

    columns = [
        Column("system"),
        Column("quality", numeric=True),
        Column("quality_ci", header="95% CI", show=_quality_interval, in_data=False),
        Column("quality_ci_low", numeric=True, in_text=False),
        Column("quality_ci_high", numeric=True, in_text=False),
        Column("input_tokens", header="tokens in", numeric=True),
        Column("output_tokens", header="tokens out", numeric=True),
        Column("calls", numeric=True),
        Column("cost_usd", header="cost", numeric=True, show=money("cost_usd")),
        Column("mean_latency_s", header="latency s", numeric=True, digits=2),
        Column("p50_s", header="p50 s", numeric=True, digits=2, in_text=False),
        Column("p95_s", header="p95 s", numeric=True, digits=2),
        Column("eval_cost_usd", header="eval cost", numeric=True, show=money("eval_cost_usd")),
        Column("quality_per_dollar", header="quality/$", numeric=True, digits=1),
        Column("tokens_saved", header="tokens saved", numeric=True, show=_saved),
        Column("tokens_saved_share", numeric=True, in_text=False),
        Column("frontier"),
        Column("notes", in_text=False),
    ]
    latency = {s.system: s for s in view.latency}
    points = {p.system: p for p in view.frontier.points} if view.frontier else {}
    rows = [_cost_row(row, latency.get(row.system), points.get(row.system)) for row in view.rows]
    basis = view.frontier.basis() if view.frontier is not None else "one system, no frontier"
    notes = [
        f"quality = mean of {view.metric}; quality/$ = quality / cost per answer; "
        f"tokens saved = {view.baseline}'s tokens (in + out) minus the system's; frontier: {basis}"
    ]
    if view.frontier is not None and view.frontier.notes:
        notes += [f"frontier: {n}" for n in view.frontier.notes]
    notes += [f"{row.system}: {note}" for row in view.rows for note in row.notes]
    return Table(f"cost view of run {view.run_id[:12]} (baseline {view.baseline})", columns, rows, notes)


def _cost_row(row, latency, point) -> dict:
    values = dataclasses.asdict(row) | {"notes": "; ".join(row.notes)}
    values["p50_s"] = None if latency is None else latency.at(0.5).value
    values["p95_s"] = None if latency is None else latency.at(0.95).value
    values["frontier"] = "" if point is None else "yes" if point.on_frontier else "no"
    return values


def _quality_interval(row: dict) -> str:
    if row["quality_ci_low"] is None:
        return "-"
    return f"[{row['quality_ci_low']:.3f}, {row['quality_ci_high']:.3f}]"


def _saved(row: dict) -> str:
    if row["tokens_saved"] is None:
        return "baseline"
    share = row["tokens_saved_share"]
    return f"{row['tokens_saved']:+d}" + ("" if share is None else f" ({share:+.0%})")


COMMANDS = [breakdown_command, cost_command]
