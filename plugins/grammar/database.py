"""The source database: opened read-only through SQLAlchemy, its schema introspected (GRAMMAR section 3.1).

Three ways to name it:

- ``path``: a SQLite file, opened with ``mode=ro`` (SQLite itself refuses every write);
- ``url``: any SQLAlchemy URL; SQLite URLs are opened read-only the same way, other databases run every
  query inside a transaction that is rolled back (``SET TRANSACTION READ ONLY`` where the dialect has it);
- ``sql_dump``: a SQL text dump loaded into a private in-memory SQLite database, then made read-only
  (``PRAGMA query_only``), so an example can ship its data as reviewable text.

Nothing ever writes to the database; only validated SELECT queries with bound parameters are run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from ragassay import DatasetError


@dataclasses.dataclass(frozen=True)
class ForeignKey:
    """``FK(T.columns -> ref_table.ref_columns)``."""

    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]


@dataclasses.dataclass
class Table:
    """A table schema S_i = (T_i, {A_1..A_m}, C): name, columns with types, primary and foreign keys."""

    name: str
    columns: dict[str, str]  # column name -> type, in table order
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()

    def column(self, name: str) -> str | None:
        """The column's real name, matched case-insensitively (None if absent)."""
        return next((c for c in self.columns if c.lower() == name.lower()), None)

    def describe(self) -> str:
        """One line per table, as given to the SQL template generator (Table 3's {GIVEN_SCHEMA})."""
        cols = ", ".join(f"{c} {t}{' PRIMARY KEY' if c in self.primary_key else ''}" for c, t in self.columns.items())
        fks = "".join(
            f"; FOREIGN KEY ({', '.join(fk.columns)}) REFERENCES {fk.ref_table}({', '.join(fk.ref_columns)})"
            for fk in self.foreign_keys
        )
        return f"{self.name}({cols}{fks})"


@dataclasses.dataclass
class Schema:
    """The tables of a database."""

    tables: dict[str, Table]

    def table(self, name: str) -> Table | None:
        """A table by name, matched case-insensitively."""
        return next((t for n, t in self.tables.items() if n.lower() == name.lower()), None)

    def describe(self, names: list[str] | None = None) -> str:
        chosen = [self.tables[n] for n in self.tables if names is None or n in names]
        return "\n".join(t.describe() for t in chosen)


class SourceDatabase:
    """A database opened read-only, with its schema."""

    def __init__(self, engine: Engine, label: str):
        self.engine = engine
        self.label = label
        self.schema = self._introspect()

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        """A connection inside a transaction that is always rolled back."""
        with self.engine.connect() as conn:
            trans = conn.begin()
            try:
                if self.engine.dialect.name in ("postgresql", "mysql", "mariadb"):
                    conn.execute(text("SET TRANSACTION READ ONLY"))
                yield conn
            finally:
                trans.rollback()

    def quote(self, name: str) -> str:
        """An identifier quoted for this database."""
        return self.engine.dialect.identifier_preparer.quote(name)

    def close(self) -> None:
        self.engine.dispose()

    def _introspect(self) -> Schema:
        try:
            inspector = inspect(self.engine)
            tables = {}
            for name in inspector.get_table_names() + inspector.get_view_names():
                columns = {c["name"]: str(c["type"]) for c in inspector.get_columns(name)}
                pk = tuple(inspector.get_pk_constraint(name).get("constrained_columns") or ())
                fks = tuple(
                    ForeignKey(tuple(fk["constrained_columns"]), fk["referred_table"], tuple(fk["referred_columns"]))
                    for fk in inspector.get_foreign_keys(name)
                )
                tables[name] = Table(name, columns, pk, fks)
        except (SQLAlchemyError, sqlite3.Error) as exc:
            self.close()
            raise DatasetError(f"grammar: cannot read the database {self.label}: {_reason(exc)}") from None
        if not tables:
            self.close()
            raise DatasetError(f"grammar: the database {self.label} has no tables")
        return Schema(tables)


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__


def open_sqlite_file(path: Path) -> SourceDatabase:
    """A SQLite file, read-only (``mode=ro``): missing files are an error, never created."""
    if path.is_dir():
        raise DatasetError(f"grammar: the 'path' {path} is a folder; give the SQLite database file (e.g. aurp.db)")
    if not path.is_file():
        raise DatasetError(f"grammar: database file not found: {path}; check the 'path' (or 'url') option")
    uri = path.resolve().as_uri().replace("file://", "file:", 1) + "?mode=ro"
    engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False))
    return SourceDatabase(engine, str(path))


def open_url(url: str, base_dir: Path) -> SourceDatabase:
    """Any SQLAlchemy URL; SQLite files are opened read-only, others in rolled-back transactions."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatasetError(f"grammar: {url!r} is not a SQLAlchemy URL ({exc})") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        path = Path(parsed.database).expanduser()
        return open_sqlite_file(path if path.is_absolute() else base_dir / path)
    try:
        engine = create_engine(url)
        with engine.connect():
            pass
    except (SQLAlchemyError, ImportError) as exc:
        raise DatasetError(
            f"grammar: cannot open the database {parsed.render_as_string(hide_password=True)}: {_reason(exc)}"
        ) from None
    return SourceDatabase(engine, parsed.render_as_string(hide_password=True))


def open_sql_dump(path: Path) -> SourceDatabase:
    """A SQL text dump loaded into a private in-memory SQLite database, read-only once loaded."""
    try:
        script = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"grammar: cannot read the SQL dump {path}: {exc}") from None
    raw = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        raw.executescript(script)
    except sqlite3.Error as exc:
        raw.close()
        raise DatasetError(f"grammar: the SQL dump {path} does not load: {exc}") from None
    raw.execute("PRAGMA query_only = ON")
    engine = create_engine("sqlite://", creator=lambda: raw, poolclass=StaticPool)
    return SourceDatabase(engine, f"{path} (loaded in memory)")
