"""``ragassay generate``: run a config's dataset source on its own, writing its samples (and documents) to JSONL.

``--dry-run`` prints the source's plan (for ``grammar``: the M x N x Q counts of GRAMMAR Appendix C per
template) and generates nothing. Otherwise samples stream to the file one line at a time, so memory does not
grow with their number; the file appears under its final name only when generation completed. Sources may
offer ``summary()`` (a list of dicts, e.g. what was kept and dropped per template); it is printed after.
The output is a ``files`` source samples file: ``[dataset] source = "files"`` with ``path`` reads it back.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from ..text import terminal_safe
from .common import config_option, console, project_path
from .file_params import FilePath
from .render import esc


@click.command("generate")
@click.argument("config", required=False, type=click.Path(path_type=Path))
@config_option
@click.option("--dry-run", is_flag=True, help="Print what would be generated (counts per template); write nothing.")
@click.option(
    "--out",
    type=FilePath("the samples file to write, e.g. {folder}/generated.jsonl"),
    default=Path("generated.jsonl"),
    show_default=True,
    help="Samples file (JSONL).",
)
@click.option(
    "--documents",
    "documents_out",
    type=FilePath("the documents file to write, e.g. {folder}/documents.jsonl"),
    default=None,
    help="Documents file (JSONL); default: next to --out as <stem>.documents.jsonl, if there are any.",
)
def generate_command(
    config: Path | None, config_path: Path, dry_run: bool, out: Path, documents_out: Path | None
) -> None:
    """Generate the samples of the project's dataset source (e.g. GRAMMAR query-answer pairs) into a JSONL file.

    Name the project with --config (CONFIG, positional, means the same).
    """
    from ..engine.project import Project

    project = Project.load(project_path(config, config_path))  # [llm] cache and prices apply here too
    loaded = project.loaded
    source = project.dataset.build(project.context)
    name = project.dataset.info.name
    if dry_run:
        plan = _guarded(name, source.plan)
        if plan is None:
            raise click.ClickException(
                f"dataset source '{name}' cannot tell in advance what it generates; run without --dry-run"
            )
        _print_rows(f"{name}: what would be generated (nothing written)", plan)
        return
    start = time.perf_counter()
    count = _write_jsonl(out, _guarded_iter(name, source.samples, loaded.config.dataset.limit))
    elapsed = time.perf_counter() - start
    click.echo(f"wrote {count} samples to {out} in {elapsed:.2f}s ({count / max(elapsed, 1e-9):,.0f}/s)", err=True)
    for warning in project.context.warnings:
        click.echo(f"  warning: {terminal_safe(warning)}", err=True)
    summary = _guarded(name, source.summary)
    if summary:
        _print_rows(f"{name}: per template", summary)
    documents_out = documents_out or out.with_name(f"{out.stem}.documents.jsonl")
    docs = _write_jsonl(documents_out, _guarded_iter(name, source.documents, None), keep_empty=False)
    if docs:
        click.echo(f"wrote {docs} documents to {documents_out}", err=True)


def _guarded(name: str, produce):
    """Call a source method; unexpected exceptions become a DatasetError naming the source."""
    from ..errors import DatasetError, RagassayError

    try:
        return produce()
    except RagassayError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DatasetError(f"dataset source '{name}' failed: {type(exc).__name__}: {exc}") from exc


def _guarded_iter(name: str, produce, limit: int | None) -> Iterable[Any]:
    from ..errors import DatasetError, RagassayError

    try:
        for i, item in enumerate(produce()):
            if limit is not None and i >= limit:
                return
            yield item
    except RagassayError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DatasetError(f"dataset source '{name}' failed: {type(exc).__name__}: {exc}") from exc


def _write_jsonl(path: Path, items: Iterable[Any], keep_empty: bool = True) -> int:
    """Stream pydantic models to ``path`` one JSON line each, via a temporary file renamed at the end."""
    partial = path.with_name(path.name + ".partial")
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    try:
        with partial.open("w", encoding="utf-8") as handle:
            for item in items:
                handle.write(item.model_dump_json() + "\n")
                count += 1
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    if count or keep_empty:
        partial.replace(path)
    else:
        partial.unlink(missing_ok=True)
    return count


def _print_rows(title: str, rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    columns = list(dict.fromkeys(key for row in rows for key in row))
    table = Table(title=esc(title))
    for column in columns:
        numeric = all(isinstance(row.get(column), (int, float)) for row in rows if column in row)
        table.add_column(esc(column), justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(esc(row.get(column, "")) for column in columns))
    console().print(table)


COMMANDS = [generate_command]
