"""Opening a results database: engine per dialect, schema check and migration under a lock, clear errors.

SQLite files and PostgreSQL servers get the same schema through the same migrations. Two processes opening a
new database at once do not both create it: on SQLite the migration runs under the write lock
(``BEGIN IMMEDIATE``), on PostgreSQL under a transaction-scoped advisory lock (``pg_advisory_xact_lock``).
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError, SQLAlchemyError

from ..errors import StoreError, StoreUnavailableError
from . import schema as t
from .backends import backend_for
from .database import ResultsStore
from .healing import DEFAULT_RETRY_S, SQLITE_BUSY_TIMEOUT_MS, Diagnosis, Healer, diagnose, explain
from .migrations import current_version, migrate
from .urls import RESULTS_KEY, expand, redact, redact_text

#: The advisory lock key of schema migrations on PostgreSQL (any constant shared by every ragassay).
MIGRATION_LOCK_KEY = 0x7261_6761_7373_6179 & 0x7FFF_FFFF_FFFF_FFFF  # "ragassay"

_POSTGRES_DRIVER_HINT = "Install the PostgreSQL driver: pip install 'ragassay[postgres]'"


def open_store(
    url: str, *, create: bool = True, key: str = RESULTS_KEY, retry_s: float = DEFAULT_RETRY_S
) -> ResultsStore:
    """Open (and migrate) the results database at ``url``: with the backend registered for its scheme
    (:mod:`ragassay.store.backends`), else as a SQLAlchemy database.

    :param url: a SQLAlchemy URL as written in the config (``${VAR}`` / ``$VAR`` are expanded here, never
        stored); see :func:`ragassay.store.urls.store_url`.
    :param create: create (and migrate) a database that does not exist yet; when False a missing SQLite file
        or a server database without results is a :class:`StoreError` saying to run first, and a SQLite file
        that cannot be written (a read-only file, folder or mount) is opened read-only.
    :param key: where the URL comes from (``[project] results``, ``--db``), named in errors.
    :param retry_s: how long the store retries transient errors once open (``[project] results_retry_s``).

    Refuses a database written by a newer ragassay, a file that is not a database, an unreachable server, a
    missing database or driver, a read-only or uncreatable path to write, each with one message naming the URL
    (its password redacted) and what to do.
    """
    opener = backend_for(url)
    if opener is not None:
        return opener(url, create=create, key=key, retry_s=retry_s)
    shown = redact(url)
    real = expand(url, key)
    read_only = False
    where = shown
    if real.startswith("sqlite:///"):
        path = Path(real.removeprefix("sqlite:///"))
        where = str(path)
        if not create and not path.exists():
            raise StoreError(f"no results database at {path}. Run 'ragassay run CONFIG' first.")
        read_only = not create and not _writable(path)
        if create:
            _check_writable(path, key)
        elif read_only:
            real = read_only_url(path)
    engine = _engine(real, shown, read_only=read_only)
    try:
        with engine.begin() as conn:
            _check_and_migrate(conn, shown, create=create, read_only=read_only)
    except DatabaseError as exc:
        engine.dispose()
        raise _open_failure(exc, shown, where, real, key) from exc
    except StoreError:
        engine.dispose()
        raise
    healer = Healer(where, retry_s=retry_s, key=key, redact=lambda text: redact_text(text, real))
    return ResultsStore(engine, healer)


def _writable(path: Path) -> bool:
    """Whether a SQLite file (or the folder it would be created in) can be written, with its folder (SQLite
    writes its journal files next to it)."""
    folder = path.parent if path.parent.exists() else None
    return (not path.exists() or os.access(path, os.W_OK)) and folder is not None and os.access(folder, os.W_OK)


def _check_writable(path: Path, key: str) -> None:
    """Create the folder of a SQLite file to write; a path that cannot be created or written is one line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        cause = diagnose(exc)
        diagnosis = dataclasses.replace(cause, cause=f"its folder {path.parent} cannot be created")
        raise StoreUnavailableError(explain(str(path), diagnosis, key=key)) from exc
    if not _writable(path):
        read_only_file = path.exists() and not os.access(path, os.W_OK)
        read_only_folder = not os.access(path.parent, os.W_OK)
        what = {
            (True, True): "the file and its folder are",
            (True, False): "the file is",
            (False, True): f"its folder {path.parent} is",
        }[read_only_file, read_only_folder]
        them = "them" if read_only_file and read_only_folder else "it"
        fix = f"make {them} writable, or point {{key}} at a writable path"
        raise StoreUnavailableError(explain(str(path), Diagnosis(False, f"{what} read-only", "", fix), key=key))


def read_only_url(path: Path) -> str:
    """A SQLite URL that reads ``path`` without writing anything next to it.

    With a writable folder, ``mode=ro`` (SQLite may create its ``-shm`` file there and sees a live writer's
    WAL). In a read-only folder: ``mode=ro`` when the ``-shm`` file is there, ``immutable=1`` when no WAL holds
    unsaved changes; a WAL with changes but no ``-shm`` cannot be read there, which is said.
    """
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    mode = "mode=ro"
    if not os.access(path.parent, os.W_OK) and not shm.exists():
        if wal.exists() and wal.stat().st_size > 0:
            raise StoreError(
                f"results database {path} is in a read-only folder and its changes in {wal.name} cannot be read "
                f"without creating {shm.name} there. Make the folder writable once (any ragassay command then "
                "saves the changes into the file), or copy the files to a writable folder and read them there."
            )
        mode = "immutable=1"
    return f"sqlite:///file:{quote(str(path))}?{mode}&uri=true"


def _engine(url: str, shown: str, *, read_only: bool = False) -> Engine:
    try:
        engine = create_engine(url, pool_pre_ping=not url.startswith("sqlite"))
    except ImportError as exc:
        hint = _POSTGRES_DRIVER_HINT if url.startswith("postgresql") else "Install the database driver it names."
        raise StoreError(f"cannot use results database {shown}: its driver is missing ({exc}). {hint}") from exc
    except (SQLAlchemyError, ValueError) as exc:
        raise StoreError(f"cannot use results database URL {shown!r}: {redact_text(str(exc), url)}") from exc
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_read_only_pragmas if read_only else _sqlite_pragmas)
    return engine


def _check_and_migrate(conn: Any, shown: str, *, create: bool, read_only: bool = False) -> None:
    version = current_version(conn)
    if version > t.SCHEMA_VERSION:
        raise StoreError(
            f"results database {shown} has schema version {version}, newer than this ragassay "
            f"understands ({t.SCHEMA_VERSION}). Upgrade ragassay; the database was not modified."
        )
    if read_only and version < t.SCHEMA_VERSION:
        raise StoreError(
            f"results database {shown} is read-only and has schema version {version}, older than this ragassay "
            f"reads ({t.SCHEMA_VERSION}). Make it writable once so it can be upgraded (or copy it somewhere "
            "writable); the database was not modified."
        )
    if version == 0 and not create and conn.dialect.name != "sqlite":
        raise StoreError(f"results database {shown} holds no results yet. Run 'ragassay run CONFIG' first.")
    if version < t.SCHEMA_VERSION:
        _lock_for_migration(conn)
        migrate(conn, t.SCHEMA_VERSION)  # re-reads the version under the lock: a concurrent opener may be done


def _open_failure(exc: DatabaseError, shown: str, where: str, url: str, key: str) -> StoreError:
    """One line: what failed on which database (password redacted) and what to do."""
    reason = redact_text(str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else repr(exc.orig), url)
    diagnosis = diagnose(exc)
    if url.startswith("sqlite"):
        if diagnosis is not None and "not a SQLite database" not in diagnosis.cause:
            return StoreUnavailableError(explain(where, dataclasses.replace(diagnosis, detail=reason), key=key))
        return StoreError(f"cannot open results database {shown}: {reason}. Is it a ragassay results file?")
    lowered = reason.lower()
    if "does not exist" in lowered and "database" in lowered:
        hint = "Create the database first (createdb NAME, or CREATE DATABASE NAME on the server) or fix the URL."
    elif "password" in lowered or "authentication" in lowered:
        hint = "Check the user and the password (set the environment variable the URL names)."
    else:
        hint = "Check that the server is running and reachable from here, and the host, port and database in the URL."
    return StoreError(f"cannot connect to results database {shown}: {reason}. {hint}")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    _write_ahead_log(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _write_ahead_log(cursor: Any, patience_s: float = 10.0) -> None:
    """``PRAGMA journal_mode=WAL``. Several processes opening a new file at once: SQLite may refuse the switch
    with "database is locked" at once, without its busy wait, while another connection makes it; try again."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _sqlite_read_only_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """A read-only connection: no journal mode to set, and refuse writes even where the file allows them."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.close()


def _lock_for_migration(conn: Any) -> None:
    """Migrate under a lock, so two processes opening a new database do not both create it: SQLite's write
    lock, PostgreSQL's advisory lock (released when the transaction ends)."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
