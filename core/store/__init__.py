"""The results database: every run, output, metric value and judgement, through SQLAlchemy.

SQLite file by default; any SQLAlchemy URL works (PostgreSQL is tested against a real server). The schema is
versioned (``schema_version`` table) and upgraded by ordered migrations in :mod:`ragassay.store.migrations`.

Every store is opened with :func:`open_store` (or :meth:`ragassay.engine.project.Project.open_store`). Another
backend implements :mod:`ragassay.store.protocols` (what a run writes, what the read model reads, human labels,
traces) and is registered by URL scheme with :func:`register_backend` (or the ``ragassay.stores`` entry-point
group); nothing outside this package calls a store method that no protocol declares.

The names below are imported on first use: importing this package imports no SQLAlchemy (the command line's
modules and the run path import it when they open a store, not before).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backends import register_backend, unregister_backend
    from .connect import open_store
    from .database import ResultsStore
    from .schema import SCHEMA_VERSION
    from .urls import store_url

_WHERE = {
    "ResultsStore": "database",
    "open_store": "connect",
    "register_backend": "backends",
    "unregister_backend": "backends",
    "SCHEMA_VERSION": "schema",
    "store_url": "urls",
}

__all__ = ["ResultsStore", "open_store", "register_backend", "store_url", "unregister_backend", "SCHEMA_VERSION"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
