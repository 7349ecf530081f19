"""``ragassay gate``: run (or resume) a config, compare it with a baseline run, exit 0 / 1 / 2 for CI.

The comparison is :func:`ragassay.analysis.gate.gate`, the summary
:func:`ragassay.analysis.gate_summary.markdown_summary`; this module only runs, opens, writes and prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..text import terminal_safe
from .common import config_option, console, project_path

BASELINE_HELP = (
    "What to compare with: a run id (or unique prefix) in the project's results database, or another results "
    "database (a SQLite path or a URL, e.g. the main branch's results restored from the CI cache) with an "
    "optional #RUN suffix (default: its newest run with the same config fingerprint, else of the same project)."
)


@click.command("gate")
@click.argument("config", required=False, type=click.Path(path_type=Path))
@config_option
@click.option("--baseline", required=True, metavar="RUN|DATABASE[#RUN]", help=BASELINE_HELP)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="METRIC",
    help="Compare only this metric or judge column (judge:LABEL); repeat for several (default: all).",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Level of the Holm-adjusted paired tests: a pair is a regression when worse with Holm p < alpha.",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the random draws.")
@click.option("--summary", "summary_path", type=click.Path(path_type=Path), help="Write the markdown summary here.")
@click.option("--html", "html_path", type=click.Path(path_type=Path), help="Write the candidate's HTML report here.")
@click.option("--report-url", default=None, help="Where CI publishes the HTML report (linked from the summary).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["rich", "markdown", "json"]),
    default="rich",
    show_default=True,
    help="Stdout: the summary as text (rich), as raw markdown, or the whole result as json.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing to stdout and no progress (files are still written).")
@click.option("--no-cache", "no_cache", is_flag=True, help="Call the models even for cached requests.")
@click.option("--wait", is_flag=True, help="If another process is running this config, wait for it, then resume.")
@click.pass_context
def gate_command(ctx: click.Context, config: Path | None, config_path: Path, **options) -> None:
    """Run (or resume) the project CONFIG (default: the current folder) as the candidate, compare each system
    with the system of the same name in the --baseline run on the samples both hold, and exit

    \b
      0  no comparison is worse (pass),
      1  at least one system is worse on at least one metric (a regression),
      2  an error: bad input, a missing baseline, no shared samples (one line on stderr).

    Verdicts use the paired sign-flip permutation test with Holm's adjustment, as 'ragassay compare'
    (docs/statistics.md); the CI recipe is in docs/ci.md.
    """
    from ..errors import RagassayError

    try:
        code = _gate(project_path(config, config_path), **options)
    except (RagassayError, click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - in CI any failure must read as an error (2), not a regression (1)
        raise RagassayError(
            f"internal error: {type(exc).__name__}: {exc}. Re-run with --debug for the traceback."
        ) from exc
    ctx.exit(code)


def _gate(
    config: Path,
    *,
    baseline: str,
    metrics: tuple[str, ...],
    alpha: float,
    seed: int,
    summary_path: Path | None,
    html_path: Path | None,
    report_url: str | None,
    fmt: str,
    quiet: bool,
    no_cache: bool,
    wait: bool,
) -> int:
    from ..analysis.gate import gate, parse_baseline
    from ..analysis.gate_summary import markdown_summary
    from ..api import results_store
    from ..config import load_config

    database, run_ref = parse_baseline(baseline)
    loaded = load_config(config)
    run_id = _run_candidate(loaded, quiet=quiet, no_cache=no_cache, wait=wait)
    store = results_store(loaded)
    base_store = store if database is None else _open_baseline(database)
    try:
        candidate = store.get_run(run_id)
        base_run, source = _baseline_run(base_store, candidate, database, run_ref)
        result = gate(
            store, run_id, base_store, base_run, metrics=metrics, alpha=alpha, seed=seed, baseline_source=source
        )
        if html_path is not None:
            from ..html_report import build_report

            html_path.write_text(build_report(store, [run_id], alpha=alpha, seed=seed), encoding="utf-8")
    finally:
        if base_store is not store:
            base_store.close()
        store.close()
    text = markdown_summary(result, report_url=report_url, html_path=None if html_path is None else str(html_path))
    if summary_path is not None:
        summary_path.write_text(text, encoding="utf-8")
    if not quiet:
        _print(text, result, fmt)
    return result.exit_code


def _run_candidate(loaded, *, quiet: bool, no_cache: bool, wait: bool) -> str:
    """Run or resume the config (progress and warnings on stderr); the run's id."""
    from ..api import run
    from .progress import make_progress, progress_every, run_callbacks, system_count

    progress = make_progress(quiet, progress_every(None))

    on_start, on_result = run_callbacks(progress, system_count(loaded))

    try:
        summary = run(loaded, no_cache=no_cache, wait=wait, on_start=on_start, on_result=on_result)
    finally:
        if progress is not None:
            progress.stop()
    click.echo(
        f"candidate run {summary.run_id}: {summary.completed} units done, {summary.skipped} already done, "
        f"{summary.reused} reused, {summary.failed} failed",
        err=True,
    )
    for warning in summary.warnings:
        click.echo(f"  warning: {terminal_safe(warning)}", err=True)
    return summary.run_id


def _open_baseline(database: str):
    from ..errors import StoreError
    from ..store import open_store, store_url

    if "://" not in database and not Path(database).exists():
        raise StoreError(
            f"--baseline: no results database at {database}. In CI the main branch's results were not restored "
            f"(first run, or the cache expired): run the gate on main first (docs/ci.md), or give a run id."
        )
    return open_store(store_url(database, Path.cwd()), create=False, key="--baseline")


def _baseline_run(store, candidate: dict, database: str | None, ref: str | None) -> tuple[str, str]:
    """The baseline run's id and where it was found."""
    from ..analysis.gate import pick_baseline_run
    from ..store.urls import redact
    from .common import get_run

    if database is None:
        return get_run(store, ref)["id"], "this project's results database"
    return pick_baseline_run(store, candidate, ref)["id"], redact(database)


def _print(text: str, result, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(result.as_dict(), indent=2))
    elif fmt == "markdown":
        click.echo(terminal_safe(text), nl=False)
    else:
        from .render import esc

        console().print(esc(text), highlight=False, soft_wrap=True)


COMMANDS = [gate_command]
