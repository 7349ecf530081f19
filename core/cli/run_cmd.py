"""``ragassay run``: run (or resume) the evaluation a config describes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from ..text import terminal_safe
from .common import config_option, console, project_path


@click.command("run")
@click.argument("config", required=False, type=click.Path(path_type=Path))
@config_option
@click.option(
    "--new", is_flag=True, help="Start a fresh run: neither resume this config's run nor reuse outputs of earlier runs."
)
@click.option("--description", default="", help="Free text stored with a new run and shown by 'ragassay runs'.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no comparison table.")
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help="Call the models even for requests in the LLM response cache (and do not store replies).",
)
@click.option(
    "--wait",
    is_flag=True,
    help="If another process is running this config, wait for it to finish, then resume (default: refuse).",
)
@click.option(
    "--repeat",
    "repeats",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Score every model-calling metric and judge N times (real calls) and report the run-to-run spread.",
)
@click.option(
    "--baseline",
    default=None,
    metavar="SYSTEM",
    help="System the verdicts at the end test the others against (default: the first system).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default=None,
    help="Where units run (default: [project] executor): this process, or a Ray cluster.",
)
@click.option("--address", default=None, help="Ray cluster address (default: [project.ray] address, $RAY_ADDRESS).")
@click.option(
    "--workers", type=click.IntRange(min=1), default=None, help="Ray worker actors (default: [project.ray] workers)."
)
@click.option(
    "--budget",
    "budget_text",
    default=None,
    metavar="KEY=VALUE,...",
    help="Limits of this session, any of usd, calls, tokens, seconds (e.g. calls=100,usd=5), in place of "
    "[evaluation] budget. A run that reaches one stops, prints its partial verdicts and exits with code 3; "
    "re-running with a larger budget resumes.",
)
@click.option(
    "--sequential/--no-sequential",
    default=None,
    help="Stop early: samples in the seeded order, every comparison of the decision family checked after each "
    "batch with an anytime-valid test, and a system's units stop once its comparisons are settled "
    "([evaluation] sequential sets alpha, batch, max_samples, margin; docs/statistics.md). --no-sequential: a "
    "full run even when [evaluation] sequential is set. Default: as configured.",
)
@click.option(
    "--sample",
    default=None,
    metavar="SHARE",
    help="Score a subset: sets the dataset source's 'sample' option (e.g. 5% or 0.05; the traces source picks by a "
    "hash of the trace id, the same subset on every run). Refused for a source without that option.",
)
@click.option(
    "--where",
    multiple=True,
    metavar="KEY=VALUE",
    help="Filter the samples (repeatable; a key given twice takes either value): added to the dataset source's "
    "'where' option (the traces source: model, service.version, route, since, until, ...). Refused for a source "
    "without that option.",
)
@click.option(
    "--progress-every",
    "progress_every_s",
    type=float,
    default=None,
    help="Seconds between progress lines when stderr is not a terminal (default: $RAGASSAY_PROGRESS_EVERY or 10).",
)
def run_command(
    config: Path | None,
    config_path: Path,
    new: bool,
    description: str,
    quiet: bool,
    no_cache: bool,
    wait: bool,
    repeats: int,
    baseline: str | None,
    executor: str | None,
    address: str | None,
    workers: int | None,
    progress_every_s: float | None,
    budget_text: str | None,
    sequential: bool | None,
    sample: str | None,
    where: tuple[str, ...],
) -> None:
    """Run every system on every sample of the project (--config, or CONFIG: the same) and score the outputs.

    Results are stored as they are produced; re-running the same config resumes, skipping completed work.
    Only one process works on a config's run at a time: a second one refuses, or waits with --wait.
    """
    from ..llm.budget import Budget
    from .progress import make_progress, progress_every

    budget = Budget.parse(budget_text) if budget_text is not None else None
    progress = make_progress(quiet, progress_every(progress_every_s))
    loaded = _load_project(project_path(config, config_path), executor, address, workers, sample, where)
    options = {"new": new, "no_cache": no_cache, "description": description, "wait": wait, "repeats": repeats}
    options |= {"budget": budget, "sequential": sequential, "baseline": baseline}
    if not quiet:
        options["on_plan"] = lambda plan: _print_estimate(plan, resume=not new)
    summary = _run_with_progress(loaded, progress, options)
    _say_summary(summary)
    if not quiet:
        _print_comparison(loaded, summary, baseline)
    if summary.budget_limited:
        raise SystemExit(BUDGET_LIMITED_EXIT)


def _load_project(path: Path, executor, address, workers, sample, where):
    """The project's config, with ``--executor``/``--address``/``--workers`` and ``--sample``/``--where``
    applied."""
    from ..config import load_config
    from ..engine.executor import with_executor

    loaded = with_executor(load_config(path), executor, address, workers)
    if sample is not None or where:
        from ..engine.source_flags import with_source_options
        from ..plugin_manager import get_plugin_host

        loaded = with_source_options(loaded, get_plugin_host().registry, sample=sample, where=where)
    return loaded


def _run_with_progress(loaded, progress, options: dict):
    """:func:`ragassay.api.run` with the progress display; after Ctrl-C or a failure, says what is stored."""
    from ..api import run
    from ..engine.interruptible import exit_interrupted
    from .progress import build_callbacks, run_callbacks, system_count

    announce, on_result = run_callbacks(progress, system_count(loaded))
    started: list[str] = []  # the run id, once the run is open

    def on_start(summary) -> None:
        started.append(summary.run_id)
        announce(summary)

    try:
        return run(
            loaded, on_wait=_say_waiting, on_start=on_start, on_result=on_result, **options, **build_callbacks(progress)
        )
    except KeyboardInterrupt:
        _stop(progress)
        _say_partial(loaded, started)
        exit_interrupted(130)
    except Exception:
        _stop(progress)
        _say_partial(loaded, started)
        raise
    finally:
        _stop(progress)


def _stop(progress) -> None:
    """Stop the progress display (once: stopping it again does nothing)."""
    if progress is not None:
        progress.stop()


def _say_summary(summary) -> None:
    """The session in lines on stderr: units, warnings, the first failures, a budget's partial note, a sequential
    run's decisions."""
    click.echo(
        f"run {summary.run_id}: {summary.completed} units done in {summary.elapsed_s:.1f}s, "
        f"{summary.skipped} skipped, {summary.reused} reused from earlier runs, {summary.failed} failed, "
        f"{summary.metric_errors} metric errors",
        err=True,
    )
    for warning in summary.warnings:
        if warning == summary.partial_note():
            continue  # said below, on its own line
        click.echo(f"  warning: {terminal_safe(warning)}", err=True)
    for system, qid, reason in summary.failures[:10]:
        click.echo(terminal_safe(f"  failed: {system} / {qid}: {reason}"), err=True)
    if len(summary.failures) > 10:
        click.echo(f"  ... and {len(summary.failures) - 10} more (see: ragassay show RUN SAMPLE)", err=True)
    if summary.budget_limited:
        click.echo(terminal_safe(summary.partial_note() or ""), err=True)
    if summary.sequential:
        from ..config.sequential import decision_counts

        record = summary.sequential
        click.echo(
            f"sequential: {decision_counts(record['comparisons'])} after checking {record['checked']} of "
            f"{record['samples']} samples (ragassay compare shows the decisions and the saving)",
            err=True,
        )


def _print_comparison(loaded, summary, baseline: str | None) -> None:
    """The run's comparison and verdicts (partial verdicts for a budget-limited session)."""
    from ..analysis.comparison import compare
    from ..engine.project import Project
    from ..results import read_run
    from .comparison_view import print_comparison

    store = Project(loaded).open_store()
    try:
        data = read_run(store, summary.run_id)
    finally:
        store.close()
    out = console()  # rich, imported here: a quiet run prints no table
    if summary.budget_limited:
        out.print("[bold]Partial verdicts[/bold] (budget-limited: on the samples scored so far)")
    evaluation = loaded.config.evaluation
    print_comparison(out, compare([data], baseline=baseline, family=evaluation.decide, frontier=evaluation.frontier))


BUDGET_LIMITED_EXIT = 3  # the run stopped at its budget (docs/llm.md, Estimates and budgets)


def _print_estimate(plan, *, resume: bool) -> None:
    """The model calls, tokens and cost the run will make (nothing when no component calls a model); with
    ``resume``, less what the run it resumes has stored."""
    from ..engine.estimate.rows import estimate, summary_lines
    from ..engine.estimate.stored import stored_work
    from ..errors import RagassayError

    try:
        lines = summary_lines(estimate(plan, stored_work(plan) if resume else None))
    except (RagassayError, ValueError, TypeError, AttributeError) as exc:  # the run goes on; say why
        lines = [f"estimate unavailable: {type(exc).__name__}: {exc}"[:200]]
    for line in lines:
        click.echo(terminal_safe(line), err=True)


def _say_partial(loaded, started: list[str]) -> None:
    """After Ctrl-C or a failure: what the stored run's verdicts stand on now (``partial: N of M samples, ...``,
    :func:`ragassay.analysis.partial.partial_note`); nothing when the run was not opened yet."""
    if not started:
        return
    from ..analysis.partial import partial_note
    from ..engine.project import Project
    from ..results import read_run

    try:
        store = Project(loaded).open_store()
        try:
            note = partial_note(read_run(store, started[0]))
        finally:
            store.close()
    except Exception as exc:  # noqa: BLE001 - the run's own error or interrupt comes next
        note = f"partial: run {started[0][:12]} could not be read back ({exc})"
    if note:
        click.echo(terminal_safe(note), err=True)


def _say_waiting(holder) -> None:
    since = dt.datetime.fromtimestamp(holder.acquired_at).strftime("%Y-%m-%d %H:%M:%S")
    click.echo(
        f"waiting: this config is being run by pid {holder.pid} on {holder.host} (since {since}); "
        f"resuming when it finishes (Ctrl-C to stop waiting)",
        err=True,
    )


COMMANDS = [run_command]
