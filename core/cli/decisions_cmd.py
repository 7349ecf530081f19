"""``ragassay decisions``: how well an agent decided when to retrieve (ragassay.analysis.retrieval_decision)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, output_format
from .render import Column, Table, emit


@click.command("decisions")
@click.argument("run")
@config_option
@db_option
@click.option(
    "--agent", "agents", multiple=True, help="Agent system(s) (default: every system that skipped retrieval)."
)
@click.option("--baseline", default=None, help="No-retrieval system whose errors label 'retrieval was needed'.")
@click.option("--naive", default=None, help="Always-retrieve system to count tokens saved against.")
@click.option(
    "--correct",
    "column",
    default=None,
    help="Metric or judge:NAME that says whether an answer is correct (default: the first judge).",
)
@click.option(
    "--threshold",
    type=float,
    default=0.5,
    show_default=True,
    help="A value >= threshold counts as correct (e.g. 4 for a 1-5 truthfulness score).",
)
@format_option
def decisions_command(
    run: str,
    config_path: Path,
    db: str | None,
    agents: tuple[str, ...],
    baseline: str | None,
    naive: str | None,
    column: str | None,
    threshold: float,
    fmt: str | None,
) -> None:
    """Score RUN's retrieve-or-not decisions: precision, recall, accuracy, tokens saved, quality lost."""
    from ..analysis.decision_load import decisions
    from .breakdown_cmd import _load

    fmt = output_format(fmt)
    result = decisions(
        _load(run, config_path, db), agents=agents, baseline=baseline, naive=naive, column=column, threshold=threshold
    )
    title = (
        f"retrieval decisions, run {result.run_id[:8]}: needed = {result.baseline} wrong "
        f"({result.column} < {result.threshold:g})"
    )
    emit(console(), [_table(title, result.reports)], fmt)


def _table(title: str, reports: list) -> Table:
    rows = [
        {
            "agent": r.agent,
            "samples": r.samples,
            "needed": r.needed,
            "retrieved": r.retrieved,
            "precision": r.precision,
            "recall": r.recall,
            "accuracy": r.accuracy,
            "tokens saved": r.tokens_saved,
            "tokens saved share": r.tokens_saved_share,
            "skipped": r.skipped,
            "quality lost when skipped": r.quality_lost_when_skipped,
        }
        for r in reports
    ]

    def saved(row: dict) -> str:
        share = row["tokens saved share"]
        return f"{row['tokens saved']}" + ("" if share is None else f" ({share:.0%})")

    columns = [Column("agent")] + [
        Column(k, numeric=True) for k in ("samples", "needed", "retrieved", "precision", "recall", "accuracy")
    ]
    columns += [
        Column("tokens saved", numeric=True, show=saved),
        Column("tokens saved share", numeric=True, in_text=False),
        Column("skipped", numeric=True),
        Column("quality lost when skipped", numeric=True),
    ]
    return Table(title, columns, rows)


COMMANDS = [decisions_command]
