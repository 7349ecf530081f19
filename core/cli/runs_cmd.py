"""``ragassay runs``: the runs stored in a results database, told apart by systems, samples, config, description."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, open_results, output_format
from .render import Column, Table, emit

SHOWN_SYSTEMS = 2  # more systems than SHOWN_SYSTEMS + 1 print as "a, b, +N"


@click.command("runs", context_settings={"allow_extra_args": True})
@config_option
@db_option
@format_option
@click.pass_context
def runs_command(ctx: click.Context, config_path: Path, db: str | None, fmt: str | None) -> None:
    """List stored runs, newest first: id, state, systems, samples, outputs, failures, config and description."""
    from ..results import read_run_headers

    if ctx.args:
        raise stray_argument(ctx.args[0])
    fmt = output_format(fmt)
    store = open_results(config_path, db)
    try:
        runs = read_run_headers(store)
    finally:
        store.close()
    if not runs and fmt == "rich":
        click.echo("no runs yet. Start one with: ragassay run --config PROJECT")
        return
    emit(console(), [runs_table(runs)], fmt)


def stray_argument(value: str):
    """The error for ``ragassay runs VALUE``: runs takes the project as --config, or a database as --db."""
    from ..errors import ConfigError

    path = Path(value)
    if "://" in value or path.suffix.lower() in (".db", ".sqlite", ".sqlite3"):
        fix = f"name a results database with --db {value}"
    elif path.is_dir() or path.suffix.lower() == ".toml":
        fix = f"name the project with --config {value}"
    else:
        fix = "name the project with --config FOLDER, or a results database with --db URL"
    return ConfigError(f"runs takes no argument, got '{value}': {fix}")


def runs_table(runs: list) -> Table:
    """The runs as a table: one row per run (:class:`ragassay.results.RunHeader`, newest first)."""
    rows = []
    for run in runs:
        rows.append(
            {
                "run": run.id,
                "created": dt.datetime.fromtimestamp(run.created_at).strftime("%Y-%m-%d %H:%M"),
                "project": run.project,
                "state": _state(run),
                "systems": ", ".join(run.systems),
                "samples": run.sample_count,
                "outputs": run.outputs,
                "expected": run.expected,
                "failed": run.failed,
                "config": relative_path(run.config_path),
                "description": run.description,
            }
        )
    columns = [
        Column("run"),
        Column("created"),
        Column("project"),
        Column("state"),
        Column("systems", show=lambda row: abbreviate(row["systems"].split(", ") if row["systems"] else [])),
        Column("samples", numeric=True),
        Column("outputs", numeric=True, show=lambda r: f"{r['outputs']}/{r['expected']}"),
        Column("expected", numeric=True, in_text=False),
        Column("failed", numeric=True),
        Column("config"),
        Column("description"),
    ]
    return Table("runs", columns, rows)


def _state(run) -> str:
    """The state the store computed where it gives one; else the stored status, marked when incomplete."""
    if run.state:
        return f"{run.state} ({run.state_detail})" if run.state_detail else run.state
    if run.outputs >= run.expected:
        return run.status
    return f"{run.status} (incomplete: run again to resume)"


def abbreviate(names: list[str]) -> str:
    """``a, b, c`` for up to three names; ``a, b, +N`` for more."""
    if len(names) <= SHOWN_SYSTEMS + 1:
        return ", ".join(names)
    return ", ".join(names[:SHOWN_SYSTEMS]) + f", +{len(names) - SHOWN_SYSTEMS}"


def relative_path(path: str) -> str:
    """``path`` relative to the current folder when it lies below it, else as stored."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path


COMMANDS = [runs_command]
