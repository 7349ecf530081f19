"""The results database: every run, output, metric value and judgement, through SQLAlchemy.

SQLite file by default; any SQLAlchemy URL works. The schema is versioned (``schema_version`` table) and
upgraded by ordered migrations in :mod:`ragassay.store.migrations`.
"""

from .database import ResultsStore, open_store, store_url
from .schema import SCHEMA_VERSION

__all__ = ["ResultsStore", "open_store", "store_url", "SCHEMA_VERSION"]
