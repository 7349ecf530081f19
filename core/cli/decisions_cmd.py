"""``ragassay decisions``: how well an agent decided when to retrieve (ragassay.analysis.retrieval_decision)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import StoreError
from .common import config_option, console, db_option, format_option, get_run, open_results, output_format
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
    from ..analysis.decision_load import decision_outcomes, pick_system, system_rags

    fmt = output_format(fmt)
    store = open_results(config_path, db, (run,))
    try:
        run_id = get_run(store, run)["id"]
        rags = system_rags(store, run_id)
        outcomes, column = decision_outcomes(store, run_id, column, threshold)
    finally:
        store.close()
    baseline = baseline or pick_system(rags, "no_retrieval", "--baseline")
    naive = naive or pick_system(rags, "naive", "--naive")
    agents = agents or tuple(
        s for s, o in outcomes.items() if s not in (baseline, naive) and any(x.retrieved is False for x in o.values())
    )
    title = f"retrieval decisions, run {run_id[:8]}: needed = {baseline} wrong ({column} < {threshold})"
    emit(console(), [_table(title, outcomes, rags, agents, baseline, naive, run_id)], fmt)


def _table(title: str, outcomes: dict, rags: dict, agents, baseline: str, naive: str, run_id: str) -> Table:
    from ..analysis.retrieval_decision import score_decisions

    rows = []
    for agent in agents:
        if agent not in outcomes:
            raise StoreError(f"run {run_id[:12]} has no system '{agent}'. Systems: {', '.join(rags)}")
        r = score_decisions(
            outcomes[agent], outcomes.get(baseline, {}), outcomes.get(naive, {}), (agent, baseline, naive)
        )
        rows.append(
            {
                "agent": agent,
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
        )

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
