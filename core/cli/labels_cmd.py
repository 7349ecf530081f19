"""``ragassay labels export/import``: a run's human labels as JSONL (one :class:`ragassay.labels.Label` per
line), so labels can be collected elsewhere and brought in. Import is checked line by line (the rubric, its
version and values, the run, sample and systems) and idempotent: a label already stored is not added again."""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, db_option, get_run, label_store, open_results
from .file_params import FilePath
from .help_text import ListsWholeSentences


@click.group("labels", cls=ListsWholeSentences)
def labels_group() -> None:
    """Export and import human labels (JSONL; docs/labelling.md)."""


@labels_group.command("export")
@click.argument("run")
@config_option
@db_option
@click.option(
    "--out",
    "out",
    required=True,
    type=FilePath("the JSONL file to write, e.g. {folder}/labels.jsonl"),
    help="The JSONL file to write (one label per line).",
)
@click.option("--rubric", default=None, help="Only labels of this rubric (by name).")
def export_command(run: str, config_path: Path, db: str | None, out: Path, rubric: str | None) -> None:
    """Write the labels that count on RUN (the latest per annotator and item, after undo) to --out."""
    from ..labels import write_jsonl
    from ..results import read_labels

    store = open_results(config_path, db, [run])
    try:
        run_id = get_run(store, run)["id"]
        labels = read_labels(store, run_id, rubric)
    finally:
        store.close()
    count = write_jsonl(labels, out)
    what = f" of rubric {rubric}" if rubric else ""
    click.echo(f"wrote {count} label(s){what} of run {run_id[:12]} to {out}")


@labels_group.command("import")
@click.argument("file", type=FilePath("a JSONL file of labels, as 'ragassay labels export' writes it"))
@config_option
@db_option
@click.option(
    "--rubric",
    "rubric_files",
    multiple=True,
    type=FilePath("a rubric TOML file"),
    help="A rubric TOML file the labels use besides the shipped ones (correct, faithful, preference).",
)
def import_command(file: Path, config_path: Path, db: str | None, rubric_files: tuple[Path, ...]) -> None:
    """Import the labels of FILE (JSONL, as export writes it) into the results store; labels already stored
    are skipped, so importing a file again changes nothing."""
    from ..labels import SHIPPED_RUBRICS, load_rubric, read_jsonl

    rubrics = {name: load_rubric(name) for name in SHIPPED_RUBRICS}
    rubrics.update({r.name: r for r in map(load_rubric, rubric_files)})
    rows = read_jsonl(file, rubrics)
    store = open_results(config_path, db)
    try:
        added = label_store(store).add_labels([label for _, label in rows], [where for where, _ in rows])
    finally:
        store.close()
    click.echo(f"imported {added} label(s) from {file}; {len(rows) - added} were already stored")


COMMANDS = [labels_group]
