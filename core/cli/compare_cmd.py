"""``ragassay compare`` and ``ragassay show``: read stored results."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import config_option, console, db_option, fmt, open_results


@click.command("compare")
@click.argument("runs", nargs=-1, required=True)
@config_option
@db_option
@click.option("--against", "against", default=None, metavar="SYSTEM",
              help="Also show each system's paired difference to SYSTEM (same run) with a 95% bootstrap interval.")
def compare_command(runs: tuple[str, ...], config_path: Path, db: str | None, against: str | None) -> None:
    """Systems x metrics side by side for one or more RUNS (ids or unique prefixes).

    Each cell: mean over scored outputs and n (scored count); unscored outputs are counted separately.
    """
    store = open_results(config_path, db)
    try:
        out = console()
        print_comparison(out, store, list(runs))
        if against is not None:
            from .paired_view import print_paired

            for run in runs:
                print_paired(out, store, store.get_run(run)["id"], against)
    finally:
        store.close()


def print_comparison(out, store, run_ids: list[str]) -> None:
    """Render the comparison table of ``run_ids`` to ``out`` (a rich console)."""
    from rich.markup import escape
    from rich.table import Table

    from ..report import summarize_runs

    comparison = summarize_runs(store, run_ids)
    several = len({row.run_id for row in comparison.rows}) > 1
    table = Table(title="comparison: mean (n scored)", show_lines=False)
    table.add_column("system")
    for column in comparison.columns:
        table.add_column(column, justify="right")
    for column in ("failed", "retrieved", "latency s", "tokens in/out/cached", "cost $"):
        table.add_column(column, justify="right")
    best = {c: max((r.cells[c].mean for r in comparison.rows if r.cells[c].mean is not None), default=None)
            for c in comparison.columns}
    for row in comparison.rows:
        label = f"{row.run_id[:8]}/{row.system}" if several else row.system
        cells = [_cell(row.cells[c], best[c]) for c in comparison.columns]
        failed = f"{row.failed}" + (f" +{row.missing} missing" if row.missing else "")
        tokens = f"{fmt(row.mean_input_tokens, 0)}/{fmt(row.mean_output_tokens, 0)}/{fmt(row.mean_cached_tokens, 0)}"
        cost = "?" if row.cost_usd is None else f"{row.cost_usd:.4f}"
        retrieved = f"{row.retrievals}/{row.outputs - row.failed}"
        table.add_row(escape(label), *cells, failed, retrieved, fmt(row.mean_latency_s, 4), tokens, cost)
    out.print(table)
    for line in _footnotes(comparison.rows, several):
        out.print(escape(line), highlight=False)


def _footnotes(rows, several: bool) -> list[str]:
    """Where tokens and cost come from; why a cost is '?'."""
    from ..llm.pricing import PRICES_AS_OF

    notes = []
    if any(row.mean_input_tokens or row.mean_output_tokens for row in rows):
        hits = sum(row.cache_hits for row in rows)
        notes.append(f"tokens: mean per sample (input/output/provider-cached input); cost $: total per system at "
                     f"list prices as of {PRICES_AS_OF} plus [llm.prices]"
                     + (f"; {hits} responses came from the response cache (no call made, cost counted as if "
                        f"made)" if hits else ""))
        for run_id in dict.fromkeys(row.run_id for row in rows):
            mine = [row for row in rows if row.run_id == run_id]
            costs = [row.cost_usd for row in mine]
            total = "?" if None in costs else f"{sum(costs):.4f}"
            notes.append(f"run {run_id[:8]}: {sum(r.input_tokens for r in mine)} input and "
                         f"{sum(r.output_tokens for r in mine)} output tokens, {sum(r.calls for r in mine)} model "
                         f"calls, {sum(r.cache_hits for r in mine)} cached replies, cost $ {total}")
    for row in rows:
        if row.cost_usd is None:
            label = f"{row.run_id[:8]}/{row.system}" if several else row.system
            example = row.unpriced_models[0].rpartition("/")[2] if row.unpriced_models else "MODEL"
            notes.append(f"? {label}: no price for {', '.join(row.unpriced_models)}; add one to the config, e.g. "
                         f"[llm.prices.\"{example}\"] input_per_million = ..., output_per_million = ... (USD)")
    return notes


def _cell(cell, best: float | None) -> str:
    if cell.mean is None:
        text = f"- ({cell.unscored} unscored)" if cell.unscored else "-"
        return text
    text = f"{cell.mean:.3f} ({cell.n})"
    if cell.unscored:
        text += f" +{cell.unscored}u"
    return f"[bold green]{text}[/]" if best is not None and abs(cell.mean - best) < 1e-12 else text


@click.command("show")
@click.argument("run")
@click.argument("sample")
@config_option
@db_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show_command(run: str, sample: str, config_path: Path, db: str | None, as_json: bool) -> None:
    """One SAMPLE (question_id) of RUN: question, references, and each system's contexts, answer, scores."""
    store = open_results(config_path, db)
    try:
        run_row = store.get_run(run)
        detail = store.sample_detail(run_row["id"], sample)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(_jsonable(detail), indent=2, default=str))
        return
    _print_detail(console(), detail)


def _jsonable(detail: dict) -> dict:
    return {
        "sample": detail["sample"].model_dump(mode="json"),
        "outputs": [{**o["row"], "output": o["output"].model_dump(mode="json") if o["output"] else None,
                     "output_json": None, "metrics": o["metrics"], "judgements": o["judgements"]}
                    for o in detail["outputs"]],
    }


def _print_detail(out, detail: dict) -> None:
    from rich.markup import escape

    sample = detail["sample"]
    out.print(f"[bold]question[/] ({escape(sample.question_id)}): {escape(sample.question)}")
    out.print(f"[bold]reference answers[/]: {escape('; '.join(sample.reference_answers) or '-')}")
    out.print(f"[bold]reference context ids[/]: {escape(', '.join(sample.reference_context_ids) or '-')}")
    for item in detail["outputs"]:
        row, output = item["row"], item["output"]
        out.rule(f"system {escape(row['system'])}: {row['status']}")
        if row["status"] == "failed":
            out.print(f"[red]error[/]: {escape(row['error'] or '')}")
            continue
        for i, (cid, text) in enumerate(zip(output.context_ids, output.contexts), start=1):
            snippet = " ".join(text.split())[:160]
            out.print(f"  [{i}] {escape(cid)}: {escape(snippet)}", highlight=False)
        out.print(f"[bold]answer[/]: {escape(output.answer)}")
        for metric in item["metrics"]:
            value = fmt(metric["value"]) if metric["value"] is not None else f"unscored: {metric['unscored_reason']}"
            out.print(f"  {escape(metric['metric'])}: {escape(value)}")
        for judgement in item["judgements"]:
            out.print(f"  judge {escape(judgement['judge'])}: {judgement['verdict']} "
                      f"({escape(judgement['explanation'] or '')})")


COMMANDS = [compare_command, show_command]
