"""The results database: every run, output, metric value and judgement, through SQLAlchemy.

SQLite file by default; any SQLAlchemy URL works (PostgreSQL is tested against a real server). The schema is
versioned (``schema_version`` table) and upgraded by ordered migrations in :mod:`ragassay.store.migrations`.

Another backend implements :mod:`ragassay.store.protocols` (what a run writes, what ``read_run`` reads) and is
registered by URL scheme with :func:`register_backend` (or the ``ragassay.stores`` entry-point group).
"""

from .backends import register_backend, unregister_backend
from .connect import open_store
from .database import ResultsStore
from .schema import SCHEMA_VERSION
from .urls import store_url

__all__ = ["ResultsStore", "open_store", "register_backend", "store_url", "unregister_backend", "SCHEMA_VERSION"]
