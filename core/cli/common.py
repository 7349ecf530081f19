"""Helpers shared by commands: naming the project, finding the results database, run ids, output format."""

from __future__ import annotations

from pathlib import Path

import click

config_option = click.option(
    "-c",
    "--config",
    "config_path",
    default=".",
    show_default=True,
    type=click.Path(path_type=Path),
    help="The project: a config file, or a folder with ragassay.toml (or pyproject.toml with [tool.ragassay]).",
)


def _not_a_folder(_ctx, _param, value: str | None) -> str | None:
    """``--db`` names a database file or URL; a folder is one line that says which file to give."""
    if value and "://" not in value and Path(value).is_dir():
        from .file_params import folder_given

        raise folder_given("--db", value, f"a results database file, e.g. {value.rstrip('/')}/ragassay-results.db")
    return value


db_option = click.option(
    "--db",
    default=None,
    callback=_not_a_folder,
    help="Results database: SQLite path or SQLAlchemy URL (overrides --config).",
)


def _json_alias(ctx: click.Context, _param, value: bool) -> bool:
    if value:
        ctx.meta["ragassay.json_alias"] = True
    return value


def format_option(command):
    """``--format rich|json|csv|markdown`` (default rich: a table for people) and ``--json`` as its alias."""
    command = click.option(
        "--json", "as_json", is_flag=True, expose_value=False, callback=_json_alias, help="Same as --format json."
    )(command)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["rich", "json", "csv", "markdown"]),
        default=None,
        help="Output: a rich table (default), json (a list of objects), csv or markdown.",
    )(command)


def output_format(fmt: str | None) -> str:
    """The format chosen by ``--format`` or ``--json`` (they must agree)."""
    alias = click.get_current_context().meta.get("ragassay.json_alias", False)
    if alias and fmt not in (None, "json"):
        raise click.UsageError(f"--json contradicts --format {fmt}; give one of them.")
    return "json" if alias else fmt or "rich"


def project_path(positional: Path | None, option: Path) -> Path:
    """The project of commands that take it as a positional PATH too (run, generate): one of the two, not both."""
    if positional is None:
        return option
    if option != Path(".") and option != positional:
        raise click.UsageError(
            f"the project is named twice ({positional} and --config {option}); give it once, with --config."
        )
    return positional


def _project_not_run(value: str):
    from ..errors import ConfigError

    return ConfigError(
        f"'{value}' is a project folder, not a run id; name the project with --config {value}"
        if Path(value).is_dir()
        else f"'{value}' is a config file, not a run id; name the project with --config {value}"
    )


def open_results(config_path: Path, db: str | None, run_refs: tuple[str, ...] | list[str] = ()):
    """The results database named by --db, or else the one of the project at --config, never created: a thin
    helper over :func:`ragassay.store.open_store` (:func:`ragassay.engine.project.results_location` names it).

    ``run_refs`` are the command's run-id arguments: one that is a project folder or config file (and the
    database cannot be opened) gets the message 'name the project with --config'.
    """
    from ..engine.project import results_location
    from ..errors import RagassayError
    from ..store import open_store
    from ..store.locate import looks_like_project

    try:
        url, options = results_location(config_path, db)
        return open_store(url, **options)
    except RagassayError as exc:
        for ref in run_refs:
            if looks_like_project(ref):
                raise _project_not_run(ref) from exc
        raise


def label_store(store):
    """``store``, when it keeps human labels; else a :class:`~ragassay.errors.StoreError` saying so."""
    from ..errors import StoreError
    from ..store.protocols import LabelStore

    if not isinstance(store, LabelStore):
        raise StoreError(
            f"this results store ({type(store).__name__}) keeps no labels: its backend does not implement "
            "ragassay.store.protocols.LabelStore; use a SQLite or PostgreSQL one"
        )
    return store


def get_run(store, ref: str) -> dict:
    """The run ``ref`` (id or unique prefix); a project folder or config file given as run id is named as such."""
    from ..errors import StoreError
    from ..store.locate import looks_like_project

    try:
        return store.get_run(ref)
    except StoreError as exc:
        if looks_like_project(ref):
            raise _project_not_run(ref) from exc
        raise


def read_runs(store, refs, *, payloads=False) -> list:
    """Each run of ``refs`` read once (:func:`ragassay.results.read_run`); a project folder or config file given as
    a run id is named as such."""
    from ..errors import StoreError
    from ..results import read_run
    from ..store.locate import looks_like_project

    runs = []
    for ref in refs:
        try:
            runs.append(read_run(store, ref, payloads=payloads))
        except StoreError as exc:
            if looks_like_project(ref):
                raise _project_not_run(ref) from exc
            raise
    return runs


def console(no_color: bool | None = None):
    """A rich console as wide as ``COLUMNS`` or the terminal; when output is not a terminal, 240 columns.

    Colour follows ``NO_COLOR`` (rich reads it) unless ``no_color`` is True.
    """
    import os
    import sys

    from rich.console import Console

    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() else None if sys.stdout.isatty() else 240
    return Console(highlight=False, width=width, no_color=no_color)


def fmt(value: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals; None as ``-``."""
    return "-" if value is None else f"{value:.{digits}f}"
