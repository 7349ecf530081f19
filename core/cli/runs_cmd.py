"""``ragassay runs``: the runs stored in a results database."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from .common import config_option, console, db_option, open_results


@click.command("runs")
@config_option
@db_option
def runs_command(config_path: Path, db: str | None) -> None:
    """List stored runs, newest first: id, project, status, systems, outputs and failures."""
    from rich.table import Table

    store = open_results(config_path, db)
    try:
        runs = store.list_runs()
    finally:
        store.close()
    if not runs:
        click.echo("no runs yet. Start one with: ragassay run CONFIG")
        return
    table = Table(title="runs")
    for column in ("run", "created", "project", "status", "systems", "samples", "outputs", "failed"):
        table.add_column(column)
    for run in runs:
        expected = run["systems"] * run["sample_count"]
        status = f"{run['state']} ({run['state_detail']})" if run["state_detail"] else run["state"]
        table.add_row(
            run["id"], dt.datetime.fromtimestamp(run["created_at"]).strftime("%Y-%m-%d %H:%M"), run["project"],
            status, str(run["systems"]), str(run["sample_count"]), f"{run['outputs']}/{expected}", str(run["failed"]),
        )
    console().print(table)


COMMANDS = [runs_command]
