"""Helpers shared by commands: finding the results database, printing tables."""

from __future__ import annotations

from pathlib import Path

import click

config_option = click.option(
    "--config", "config_path", default=".", show_default=True, type=click.Path(path_type=Path),
    help="Config file (or folder with ragassay.toml) whose results database to read.",
)
db_option = click.option("--db", default=None, help="Results database: SQLite path or SQLAlchemy URL (overrides --config).")


def open_results(config_path: Path, db: str | None):
    """Open the results database named by --db, or the one of the config at --config."""
    from ..config import load_config
    from ..store import open_store, store_url

    if db is not None:
        return open_store(store_url(db, Path.cwd()), create=False)
    loaded = load_config(config_path)
    return open_store(store_url(loaded.config.project.results, loaded.base_dir), create=False)


def console():
    """A rich console; when output is not a terminal, wide enough that tables are not truncated."""
    import sys

    from rich.console import Console

    width = None if sys.stdout.isatty() else 240
    return Console(highlight=False, width=width)


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
