"""``ragassay decisions``: how well an agent decided when to retrieve (ragassay.analysis.retrieval_decision)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import StoreError
from .common import config_option, console, db_option, fmt, open_results


@click.command("decisions")
@click.argument("run")
@config_option
@db_option
@click.option("--agent", "agents", multiple=True, help="Agent system(s) (default: every system that skipped retrieval).")
@click.option("--baseline", default=None, help="No-retrieval system whose errors label 'retrieval was needed'.")
@click.option("--naive", default=None, help="Always-retrieve system to count tokens saved against.")
@click.option("--correct", "column", default=None,
              help="Metric or judge:NAME that says whether an answer is correct (default: the first judge).")
@click.option("--threshold", type=float, default=0.5, show_default=True,
              help="A value >= threshold counts as correct (e.g. 4 for a 1-5 truthfulness score).")
def decisions_command(run: str, config_path: Path, db: str | None, agents: tuple[str, ...], baseline: str | None,
                      naive: str | None, column: str | None, threshold: float) -> None:
    """Score RUN's retrieve-or-not decisions: precision, recall, accuracy, tokens saved, quality lost."""
    from rich.table import Table

    from ..analysis.decision_load import decision_outcomes, pick_system, system_rags
    from ..analysis.retrieval_decision import score_decisions

    store = open_results(config_path, db)
    try:
        run_id = store.get_run(run)["id"]
        rags = system_rags(store, run_id)
        outcomes, column = decision_outcomes(store, run_id, column, threshold)
    finally:
        store.close()
    baseline = baseline or pick_system(rags, "no_retrieval", "--baseline")
    naive = naive or pick_system(rags, "naive", "--naive")
    agents = agents or tuple(s for s, o in outcomes.items() if s not in (baseline, naive)
                             and any(x.retrieved is False for x in o.values()))
    table = Table(title=f"retrieval decisions, run {run_id[:8]}: needed = {baseline} wrong ({column} < {threshold})")
    for name in ("agent", "samples", "needed", "retrieved", "precision", "recall", "accuracy", "tokens saved",
                 "skipped", "quality lost when skipped"):
        table.add_column(name, justify="right")
    for agent in agents:
        if agent not in outcomes:
            raise StoreError(f"run {run_id[:12]} has no system '{agent}'. Systems: {', '.join(rags)}")
        r = score_decisions(outcomes[agent], outcomes.get(baseline, {}), outcomes.get(naive, {}), (agent, baseline, naive))
        share = "" if r.tokens_saved_share is None else f" ({r.tokens_saved_share:.0%})"
        table.add_row(agent, str(r.samples), str(r.needed), str(r.retrieved), fmt(r.precision), fmt(r.recall),
                      fmt(r.accuracy), f"{r.tokens_saved}{share}", str(r.skipped), fmt(r.quality_lost_when_skipped))
    console().print(table)


COMMANDS = [decisions_command]
