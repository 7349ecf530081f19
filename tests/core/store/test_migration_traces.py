"""The traces migration: a database of the version before it gains ``trace_spans`` and ``trace_resources``
(nothing else changes), with the same columns a new database gets."""

from __future__ import annotations

from sqlalchemy import create_engine, inspect

from ragassay.store import SCHEMA_VERSION, open_store
from ragassay.store.migrations import MIGRATIONS, migrate


def _columns(url):
    engine = create_engine(url)
    try:
        found = inspect(engine)
        return {t: [(c["name"], str(c["type"])) for c in found.get_columns(t)] for t in found.get_table_names()}
    finally:
        engine.dispose()


def test_an_older_database_gains_the_traces_tables_like_a_new_one(tmp_path):
    (traces_version,) = [v for v, _, function in MIGRATIONS if function.__name__ == "_traces_tables"]
    old, new = f"sqlite:///{tmp_path / 'old.db'}", f"sqlite:///{tmp_path / 'new.db'}"
    engine = create_engine(old)
    with engine.begin() as conn:
        migrate(conn, traces_version - 1)
    engine.dispose()
    assert "trace_spans" not in _columns(old)
    for url in (old, new):
        open_store(url).close()
    assert _columns(old) == _columns(new)
    assert {"trace_spans", "trace_resources"} <= set(_columns(new)) and SCHEMA_VERSION >= traces_version
