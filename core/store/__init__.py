"""The results database: every run, output, metric value and judgement, through SQLAlchemy.

SQLite file by default; any SQLAlchemy URL works (PostgreSQL is tested against a real server). The schema is
versioned (``schema_version`` table) and upgraded by ordered migrations in :mod:`ragassay.store.migrations`.
"""

from .connect import open_store
from .database import ResultsStore
from .schema import SCHEMA_VERSION
from .urls import store_url

__all__ = ["ResultsStore", "open_store", "store_url", "SCHEMA_VERSION"]
