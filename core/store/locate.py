"""Finding a run in a results store: shared by the CLI and :func:`ragassay.load_run` (a store is opened with
:func:`ragassay.store.open_store` or :meth:`ragassay.engine.project.Project.open_store`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import StoreError


def pick_run(store: Any, ref: str | None = None) -> dict[str, Any]:
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
