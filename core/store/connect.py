"""Opening a results database: engine per dialect, schema check and migration under a lock, clear errors.

SQLite files and PostgreSQL servers get the same schema through the same migrations. Two processes opening a
new database at once do not both create it: on SQLite the migration runs under the write lock
(``BEGIN IMMEDIATE``), on PostgreSQL under a transaction-scoped advisory lock (``pg_advisory_xact_lock``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError, SQLAlchemyError

from ..errors import StoreError
from . import schema as t
from .database import ResultsStore
from .migrations import current_version, migrate
from .urls import RESULTS_KEY, expand, redact, redact_text

#: The advisory lock key of schema migrations on PostgreSQL (any constant shared by every ragassay).
MIGRATION_LOCK_KEY = 0x7261_6761_7373_6179 & 0x7FFF_FFFF_FFFF_FFFF  # "ragassay"

_POSTGRES_DRIVER_HINT = "Install the PostgreSQL driver: pip install 'ragassay[postgres]'"


def open_store(url: str, *, create: bool = True, key: str = RESULTS_KEY) -> ResultsStore:
    """Open (and migrate) the results database at ``url``.

    :param url: a SQLAlchemy URL as written in the config (``${VAR}`` / ``$VAR`` are expanded here, never
        stored); see :func:`ragassay.store.urls.store_url`.
    :param create: create (and migrate) a database that does not exist yet; when False a missing SQLite file
        or a server database without results is a :class:`StoreError` saying to run first.
    :param key: where the URL comes from (``[project] results``, ``--db``), named in errors.

    Refuses a database written by a newer ragassay, a file that is not a database, an unreachable server, a
    missing database or driver, each with one message naming the URL (its password redacted) and what to do.
    """
    shown = redact(url)
    real = expand(url, key)
    if real.startswith("sqlite:///"):
        path = Path(real.removeprefix("sqlite:///"))
        if not create and not path.exists():
            raise StoreError(f"no results database at {path}. Run 'ragassay run CONFIG' first.")
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
    engine = _engine(real, shown)
    try:
        with engine.begin() as conn:
            _check_and_migrate(conn, shown, create=create)
    except DatabaseError as exc:
        engine.dispose()
        raise StoreError(_open_failure(exc, shown, real)) from exc
    except StoreError:
        engine.dispose()
        raise
    return ResultsStore(engine)


def _engine(url: str, shown: str) -> Engine:
    try:
        engine = create_engine(url, pool_pre_ping=not url.startswith("sqlite"))
    except ImportError as exc:
        hint = _POSTGRES_DRIVER_HINT if url.startswith("postgresql") else "Install the database driver it names."
        raise StoreError(f"cannot use results database {shown}: its driver is missing ({exc}). {hint}") from exc
    except (SQLAlchemyError, ValueError) as exc:
        raise StoreError(f"cannot use results database URL {shown!r}: {redact_text(str(exc), url)}") from exc
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _check_and_migrate(conn: Any, shown: str, *, create: bool) -> None:
    version = current_version(conn)
    if version > t.SCHEMA_VERSION:
        raise StoreError(
            f"results database {shown} has schema version {version}, newer than this ragassay "
            f"understands ({t.SCHEMA_VERSION}). Upgrade ragassay; the database was not modified."
        )
    if version == 0 and not create and conn.dialect.name != "sqlite":
        raise StoreError(f"results database {shown} holds no results yet. Run 'ragassay run CONFIG' first.")
    if version < t.SCHEMA_VERSION:
        _lock_for_migration(conn)
        migrate(conn, t.SCHEMA_VERSION)  # re-reads the version under the lock: a concurrent opener may be done


def _open_failure(exc: DatabaseError, shown: str, url: str) -> str:
    """One line: what failed on which database (password redacted) and what to do."""
    reason = redact_text(str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else repr(exc.orig), url)
    if url.startswith("sqlite"):
        return f"cannot open results database {shown}: {reason}. Is it a ragassay results file?"
    lowered = reason.lower()
    if "does not exist" in lowered and "database" in lowered:
        hint = "Create the database first (createdb NAME, or CREATE DATABASE NAME on the server) or fix the URL."
    elif "password" in lowered or "authentication" in lowered:
        hint = "Check the user and the password (set the environment variable the URL names)."
    else:
        hint = "Check that the server is running and reachable from here, and the host, port and database in the URL."
    return f"cannot connect to results database {shown}: {reason}. {hint}"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def _lock_for_migration(conn: Any) -> None:
    """Migrate under a lock, so two processes opening a new database do not both create it: SQLite's write
    lock, PostgreSQL's advisory lock (released when the transaction ends)."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
