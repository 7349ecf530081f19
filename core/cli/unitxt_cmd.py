"""``ragassay unitxt``: score a Unitxt RAG file, import it as a project, export a run in Unitxt's layout."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, get_run, open_results, output_format
from .file_params import FilePath
from .help_text import ListsWholeSentences
from .render import Column, Table, emit, esc

UNITXT_FILE = "a JSONL file in Unitxt's RAG task layout (docs/unitxt.md)"


@click.group("unitxt", cls=ListsWholeSentences)
def unitxt_group() -> None:
    """Unitxt's RAG task layout (JSONL): score it, import it as a project, export runs to it (docs/unitxt.md)."""


@unitxt_group.command("score")
@click.argument("file", type=FilePath(UNITXT_FILE))
@click.option(
    "-o",
    "--output",
    type=FilePath("the JSONL file to write, e.g. {folder}/scored.jsonl"),
    help="Write every record with its instance scores.",
)
@click.option("--metrics", default=None, help="Comma-separated metric names (default: all six).")
@click.option(
    "--compat",
    type=click.Choice(["unitxt", "ragassay"]),
    default="unitxt",
    show_default=True,
    help="unitxt: Unitxt's value everywhere; ragassay: unscored (with the reason) where a metric does not apply.",
)
@click.option("--resamples", type=click.IntRange(min=0), default=1000, show_default=True, help="Bootstrap resamples.")
@click.option(
    "--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95, show_default=True
)
@click.option("--seed", type=int, default=42, show_default=True, help="Seed of the resampling (Unitxt's default: 42).")
@click.option("--no-ci", is_flag=True, help="Skip the confidence intervals.")
@format_option
def score_command(file, output, metrics, compat, resamples, confidence, seed, no_ci, fmt) -> None:
    """Score the predictions in FILE with Unitxt's lexical RAG metrics: means with 95% bootstrap intervals."""
    from ..unitxt.records import read_unitxt
    from ..unitxt.scoring import METRIC_NAMES, IntervalSettings, score_records

    fmt = output_format(fmt)
    records = read_unitxt(file)
    names = [n.strip() for n in metrics.split(",") if n.strip()] if metrics else list(METRIC_NAMES)
    settings = None if no_ci else IntervalSettings(resamples or None, confidence, seed)
    started = time.perf_counter()
    scores = score_records(records, names, compat=compat, intervals=settings)
    seconds = time.perf_counter() - started
    if output is not None:
        _write_instances(output, records, scores)
    emit(console(), [_global_table(scores, len(records), compat, seconds, output)], fmt)


def _write_instances(path: Path, records, scores) -> None:
    from ..unitxt.records import record_to_sample, sample_to_record

    with path.open("w", encoding="utf-8") as handle:
        for i, record in enumerate(records):
            row = sample_to_record(
                record_to_sample(record), record.answer, list(record.contexts), list(record.contexts_ids)
            )
            score = {"instance": scores.instance(i)}
            unscored = {name: why[i] for name, why in scores.reasons.items() if i in why}
            if unscored:
                score["unscored"] = unscored
            handle.write(json.dumps({**row, "score": score}, ensure_ascii=False) + "\n")


def _global_table(scores, n: int, compat: str, seconds: float, output: Path | None) -> Table:
    import dataclasses

    rows = [dataclasses.asdict(score) for score in scores.global_scores()]
    notes = [f"{n} records, compat {compat}, {seconds:.2f} s"]
    if output is not None:
        notes.append(f"instance scores written to {esc(output)}")
    columns = [
        Column("metric", show=lambda r: esc(r["metric"])),
        Column("unitxt", in_text=False),
        Column("mean", numeric=True),
        Column("ci_low", "95% CI", numeric=True, show=_interval_text),
        Column("ci_high", in_text=False),
        Column("scored", numeric=True, show=lambda r: f"{r['scored']}/{r['records']}"),
        Column("records", in_text=False),
        Column("no_ci", in_text=False),
    ]
    return Table("Unitxt RAG metrics", columns, rows, notes)


def _interval_text(row: dict) -> str:
    if row["ci_low"] is None:
        return "-"
    return f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


@unitxt_group.command("import")
@click.argument("file", type=FilePath(UNITXT_FILE))
@click.option("--into", "folder", type=click.Path(path_type=Path), required=True, help="New project folder.")
@click.option("--name", default=None, help="Project name (default: the folder's name).")
def import_command(file: Path, folder: Path, name: str | None) -> None:
    """Make a project that evaluates FILE: its questions as the dataset, its predictions as a system."""
    from ..unitxt.project import import_project

    config = import_project(file, folder, name=name)
    click.echo(f"wrote {config}. Evaluate it with: ragassay run --config {folder}")


@unitxt_group.command("export")
@click.argument("run_id", required=False)
@click.option(
    "-o",
    "--output",
    type=FilePath("the JSONL file to write, e.g. {folder}/unitxt.jsonl"),
    required=True,
    help="JSONL file to write.",
)
@click.option("--system", "systems", multiple=True, help="Only this system (repeatable; default: all).")
@config_option
@db_option
def export_command(run_id: str | None, output: Path, systems: tuple[str, ...], config_path: Path, db) -> None:
    """Write RUN_ID's outputs (default: the latest run) as Unitxt records with their instance scores."""
    from ..errors import StoreError
    from ..results import read_run
    from ..store.locate import pick_run
    from ..unitxt.project import export_records

    store = open_results(config_path, db, [run_id] if run_id else [])
    try:
        run = read_run(store, (get_run(store, run_id) if run_id else pick_run(store))["id"], payloads=True)
    finally:
        store.close()
    unknown = sorted(set(systems) - set(run.systems))
    if unknown:
        raise StoreError(
            f"run {run.id} has no system {', '.join(unknown)}; its systems: {', '.join(sorted(run.systems))}"
        )
    records = export_records(run, list(systems) or None)
    with output.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    click.echo(f"wrote {len(records)} records of run {run.id} to {output}")


COMMANDS = [unitxt_group]
