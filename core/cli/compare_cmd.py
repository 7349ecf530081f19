"""``ragassay compare``: systems x metrics side by side for stored runs."""

from __future__ import annotations

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

    from ..analysis.comparison import summarize_runs

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
    from ..analysis.comparison import run_totals
    from ..llm.pricing import PRICES_AS_OF

    notes = []
    if any(row.mean_input_tokens or row.mean_output_tokens for row in rows):
        hits = sum(row.cache_hits for row in rows)
        notes.append(f"tokens: mean per sample (input/output/provider-cached input); cost $: total per system at "
                     f"list prices as of {PRICES_AS_OF} plus [llm.prices]"
                     + (f"; {hits} responses came from the response cache (no call made, cost counted as if "
                        f"made)" if hits else ""))
        for totals in run_totals(rows):
            total = "?" if totals.cost_usd is None else f"{totals.cost_usd:.4f}"
            notes.append(f"run {totals.run_id[:8]}: {totals.input_tokens} input and {totals.output_tokens} output "
                         f"tokens, {totals.calls} model calls, {totals.cache_hits} cached replies, cost $ {total}")
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


COMMANDS = [compare_command]
