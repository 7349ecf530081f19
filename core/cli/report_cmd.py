"""``ragassay report``: the report of a stored run (comparison, verdicts, breakdowns, cost; the GRAMMAR section for
grouped samples), or the self-contained HTML report.

The run's own stored settings are used, so a report can always be re-created from the results database alone.
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, open_results, output_format, read_runs
from .compare_cmd import decision_options
from .file_params import FilePath
from .render import Table, emit, esc

TABLES = ("comparison", "pairs", "verdicts", "latency", "variance", "breakdowns", "cost", "groups", "blame")


@click.command("report")
@click.argument("runs", nargs=-1)
@config_option
@db_option
@format_option
@click.option(
    "--html",
    "html_path",
    type=FilePath("the HTML file to write, e.g. {folder}/report.html"),
    default=None,
    metavar="FILE",
    help="Write the self-contained HTML report of RUNS (verdicts, breakdowns, plots, failure browser) to FILE.",
)
@decision_options
@click.option("--table", type=click.Choice(TABLES), default=None, help="The table csv writes (default: comparison).")
def report_command(runs: tuple[str, ...], config_path: Path, db: str | None, fmt: str | None, html_path, **options):
    """The report of RUNS (ids or unique prefixes; default: the newest run), or with --html FILE the
    self-contained HTML report of RUNS (docs/results.md, "HTML report").

    For every run: the comparison with intervals, the verdicts, latency and the frontier, breakdowns by the
    declared sample fields ([analysis] breakdowns), the cost view; for samples with a group_id the GRAMMAR section:
    robust, non-robust and gap groups, which module the wrong answers are blamed on, and each [analysis]
    hypothesis (docs/grammar.md).
    """
    from ..analysis.report import run_report

    fmt = output_format(fmt)
    table, family = options.pop("table"), options.pop("family")
    store = open_results(config_path, db, runs)
    try:
        refs = list(runs) or [_newest_run(store)]
        if html_path is not None:
            _write_html(store, refs, html_path, **options)
            return
        data = read_runs(store, refs, payloads="grouped")
    finally:
        store.close()
    reports = [run_report(run, family=list(family) or None, **options) for run in data]
    if fmt == "rich":
        for report in reports:
            print_report(console(), report)
    elif fmt == "json":
        from ..analysis.jsonable import jsonable

        emit(console(), [], "json", data=[jsonable(report) for report in reports])
    else:
        tables = [_tables(report) for report in reports]
        name = table or ("comparison" if fmt == "csv" else None)
        chosen = [t for found in tables for key, t in found if name is None or key == name]
        if name is not None and not chosen:
            raise click.UsageError(f"--table {name}: this report has no such table.")
        emit(console(), chosen[:1] if fmt == "csv" else chosen, fmt)


def _newest_run(store) -> str:
    from ..errors import StoreError

    runs = store.list_runs()
    if not runs:
        raise StoreError("the results database has no run yet. Run 'ragassay run --config PROJECT' first.")
    return runs[0]["id"]


def _write_html(store, run_ids: list[str], path: Path, family=(), **settings) -> None:
    from ..errors import ConfigError
    from ..present.html_report import build_report

    page = build_report(store, run_ids, **settings).encode("utf-8")
    try:
        path.write_bytes(page)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the HTML report to {path}: {exc.strerror}. Give a writable --html path."
        ) from exc
    console().print(f"HTML report of {len(run_ids)} run(s) written to {esc(str(path))} ({len(page):,} bytes, UTF-8)")


def _tables(report) -> list[tuple[str, Table]]:
    from ..analysis.report import skipped_line
    from .breakdown_cmd import cost_table
    from .comparison_view import comparison_tables
    from .grammar_view import grammar_tables

    found = list(comparison_tables(report.comparison).items())
    found += [("breakdowns", table) for table in _breakdown_tables(report)]
    if report.cost is not None:
        found.append(("cost", cost_table(report.cost)))
        if report.breakdowns_skipped and not report.breakdowns:  # said under the breakdowns when there are some
            found[-1][1].notes.append(skipped_line(report.breakdowns_skipped))
    if report.grammar is not None:
        names = ["groups", "blame"] + ["hypotheses"] * (len(grammar_tables(report.grammar)) - 2)
        found += list(zip(names, grammar_tables(report.grammar)))
    return found


def _breakdown_tables(report) -> list[Table]:
    """The breakdown tables, the last one noting the fields the report did not break down by."""
    from ..analysis.report import skipped_line
    from .breakdown_cmd import breakdown_table

    tables = [breakdown_table(b, report.run_id) for b in report.breakdowns]
    if tables and report.breakdowns_skipped:
        tables[-1].notes.append(skipped_line(report.breakdowns_skipped))
    return tables


def print_report(out, report) -> None:
    """One run's report to a rich console."""
    from ..analysis.report import skipped_line
    from .breakdown_cmd import cost_table
    from .comparison_view import conclusion_lines, print_comparison
    from .grammar_view import print_grammar

    out.print(f"[bold]report of run {esc(report.run_id[:12])}[/] (project {esc(report.project)})", highlight=False)
    for line in conclusion_lines(report.conclusion, report.run_id):
        out.print(esc(line), highlight=False)
    print_comparison(out, report.comparison, conclude=False)
    emit(out, _breakdown_tables(report), "rich")
    if report.breakdowns_skipped and not report.breakdowns:
        out.print(esc(skipped_line(report.breakdowns_skipped)), highlight=False)
    if report.cost is not None:
        emit(out, [cost_table(report.cost)], "rich")
    if report.cost is None:
        out.print(esc(f"no cost view: {report.cost_reason}"), highlight=False)
    if report.grammar is not None:
        print_grammar(out, report.grammar)
    elif "group_id" not in report.grammar_reason:
        out.print(esc(f"no GRAMMAR section: {report.grammar_reason}"), highlight=False)


COMMANDS = [report_command]
