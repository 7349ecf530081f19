"""Finding an existing results database and a run in it: shared by the CLI and :func:`ragassay.load_run`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import StoreError
from .connect import open_store
from .database import ResultsStore
from .urls import store_url


def open_results(config: str | Path = ".", db: str | None = None) -> ResultsStore:
    """Open the results database named by ``db``, or else the one of the project at ``config``.

    :param config: a config file, or a folder with ``ragassay.toml`` (or ``pyproject.toml`` with
        ``[tool.ragassay]``); its ``[project] results`` names the database.
    :param db: a SQLite path (relative to the working directory) or a SQLAlchemy URL; overrides ``config``.

    Never creates a database: a missing file is a :class:`~ragassay.errors.StoreError` saying to run first.
    Reads retry transient database errors for the project's ``[project] results_retry_s`` (60 s with ``db``).
    """
    if db is not None:
        return open_store(store_url(db, Path.cwd()), create=False, key="--db")
    from ..config import load_config

    loaded = load_config(config)
    project = loaded.config.project
    return open_store(store_url(project.results, loaded.base_dir), create=False, retry_s=project.results_retry_s)


def pick_run(store: ResultsStore, ref: str | None = None) -> dict[str, Any]:
    """The run ``ref`` (id or unique prefix) or, when ``ref`` is None, the newest run of the database."""
    if ref is not None:
        return store.get_run(ref)
    runs = store.list_runs()
    if not runs:
        raise StoreError("the results database has no run yet. Run 'ragassay run --config PROJECT' first.")
    return store.get_run(runs[0]["id"])


def looks_like_project(value: str) -> bool:
    """Whether a run-id argument is in fact a project folder or config file."""
    path = Path(value)
    return path.is_dir() or (path.suffix == ".toml" and path.is_file())
