"""``ragassay estimate``: the model calls, tokens and cost of a run, before any call (:mod:`ragassay.estimate`)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, project_path


@click.command("estimate")
@click.argument("config", required=False, type=click.Path(path_type=Path))
@config_option
@click.option("--format", "fmt", type=click.Choice(["markdown", "json", "csv"]), default="markdown", show_default=True)
def estimate_command(config: Path | None, config_path: Path, fmt: str) -> None:
    """Estimate the model calls (per system, metric and judge), tokens and cost of running CONFIG; calls nothing.

    Calls are exact where a component's call pattern is fixed, a range where it depends on the content, and
    'unknown' (with the reason) where a component does not declare it. Tokens: characters / 4 (docs/llm.md).
    Work already stored in the run that 'ragassay run CONFIG' would resume costs nothing and is subtracted.
    """
    from ..config import load_config
    from ..estimate import as_csv, as_json, as_markdown, estimate, footer_lines
    from ..estimate_stored import stored_work
    from ..runner import plan_run

    plan = plan_run(load_config(project_path(config, config_path)))
    try:
        stored = stored_work(plan)
        rows = estimate(plan, stored)
    finally:
        plan.samples.close()
    click.echo({"json": as_json, "csv": as_csv, "markdown": as_markdown}[fmt](rows), nl=False)
    if fmt == "markdown":
        for line in footer_lines(rows) + ([stored.note] if stored.note else []):
            click.echo(line.strip())
    elif stored.note:
        click.echo(stored.note, err=True)


COMMANDS = [estimate_command]
