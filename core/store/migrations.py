"""Ordered schema migrations, applied inside the caller's transaction; each bumps ``schema_version``.

To change the schema: edit :mod:`schema`, bump ``SCHEMA_VERSION`` and append a migration here that turns
version N-1 into N with explicit DDL (never ``create_all`` of the new tables over old data).
"""

from __future__ import annotations

from typing import Callable

from sqlalchemy import Column, Connection, Float, Integer, MetaData, String, Table, Text, inspect

from .schema import metadata, schema_version

_V1_TABLES = ("schema_version", "runs", "run_systems", "run_samples", "outputs", "metric_values", "judgements")


def _v1_initial(conn: Connection) -> None:
    """Version 1: runs, run_systems, run_samples, outputs, metric_values, judgements."""
    metadata.create_all(conn, tables=[metadata.tables[name] for name in _V1_TABLES])


def _create_run_leases(conn: Connection) -> None:
    """Version 2 (leases part): the ``run_leases`` table, as it was at version 2."""
    Table(
        "run_leases", MetaData(),
        Column("key", String(64), primary_key=True),
        Column("run_id", String(64)),
        Column("owner", String(64), nullable=False),
        Column("host", Text, nullable=False),
        Column("pid", Integer, nullable=False),
        Column("acquired_at", Float, nullable=False),
        Column("heartbeat_at", Float, nullable=False),
    ).create(conn)


#: (version, description, function) in order.
MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "initial schema", _v1_initial),
    (2, "run leases", _create_run_leases),
]


def current_version(conn: Connection) -> int:
    """The database's schema version (0 for an empty database)."""
    if not inspect(conn).has_table("schema_version"):
        return 0
    row = conn.execute(schema_version.select()).first()
    return int(row.version) if row else 0


def migrate(conn: Connection, target: int) -> list[int]:
    """Apply the migrations above the current version up to ``target``; returns the versions applied."""
    applied = []
    for version, _description, function in MIGRATIONS:
        if version <= current_version(conn) or version > target:
            continue
        function(conn)
        conn.execute(schema_version.delete())
        conn.execute(schema_version.insert().values(version=version))
        applied.append(version)
    return applied
