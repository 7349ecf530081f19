"""``ragassay estimate``: the model calls, tokens and cost of a run, before any call
(:mod:`ragassay.engine.estimate.rows`)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, project_path


@click.command("estimate")
@click.argument("config", required=False, type=click.Path(path_type=Path))
@config_option
@click.option("--format", "fmt", type=click.Choice(["markdown", "json", "csv"]), default="markdown", show_default=True)
@click.option(
    "--pilot",
    type=click.IntRange(min=1),
    default=None,
    help="Run this many samples (the first of the seeded order, [evaluation] seed) for real, in a throwaway "
    "results database, and scale their measured calls and tokens to the run where the count depends on the "
    "content; the pilot's replies stay in the LLM response cache.",
)
def estimate_command(config: Path | None, config_path: Path, fmt: str, pilot: int | None) -> None:
    """Estimate the model calls (per system, metric and judge), tokens and cost of running CONFIG; calls nothing.

    Calls are exact where a component's call pattern is fixed, a range where it depends on the content, and
    'unknown' (with the reason) where a component does not declare it. Tokens: the local model's tokenizer,
    else characters / 4 (docs/llm.md).
    Work already stored in the run that 'ragassay run CONFIG' would resume costs nothing and is subtracted.
    Calls the LLM response cache answers are subtracted too (a cache-only pass of the run: no call is made).
    Only --pilot makes model calls (it says how many). Where nothing calls a model, the markdown output is
    that one line (json and csv keep the rows of zeros).
    """
    from ..config import load_config
    from ..engine.estimate.cache import cache_pass
    from ..engine.estimate.pilot import apply_pilot, run_pilot
    from ..engine.estimate.rows import as_csv, as_json, as_markdown, calls_no_model, estimate, footer_lines
    from ..engine.estimate.stored import stored_work
    from ..engine.runner import plan_run

    plan = plan_run(load_config(project_path(config, config_path)))
    try:
        stored = stored_work(plan)
        measured = run_pilot(plan, pilot) if pilot else None
        cached = cache_pass(plan)
        rows = estimate(plan, stored, cached)
    finally:
        plan.samples.close()
    notes = [line.strip() for line in footer_lines(rows)] + [w.note for w in (stored, cached) if w.note]
    if measured is not None:
        apply_pilot(rows, measured)
        notes += measured.lines()
    if fmt == "markdown" and calls_no_model(rows):  # one line, not a table of zeros; json and csv keep the rows
        count = len({row.system for row in rows})
        systems = (
            "the system, its metrics and judges" if count == 1 else f"the {count} systems, their metrics and judges"
        )
        click.echo(f"nothing here calls a model: {systems} have no model component (0 calls, 0 tokens, $0)")
    else:
        click.echo({"json": as_json, "csv": as_csv, "markdown": as_markdown}[fmt](rows), nl=False)
    for line in notes:  # markdown: after the table; json and csv stay parseable on stdout
        click.echo(line, err=fmt != "markdown")


COMMANDS = [estimate_command]
