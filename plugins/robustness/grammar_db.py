"""Counterfactual values from a GRAMMAR database: another value of an answer's column that changes the SQL answer.

The database is loaded into memory once (a SQLite file or a ``.sql`` dump); each candidate is tried inside a
savepoint that is rolled back, so the data never changes between samples.

Candidates are the column's other values, except for a column that identifies its rows by name (every value
distinct, most of several words: a person's or a project's name): another row's value would make two rows share
it (two employees called the same), so its candidates are new names made of the column's own words, the first word
of one value with the rest of another ("Eleanor" + "Hale"), none of them an existing value.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

from ragassay import ConfigError


def value_text(value: object) -> str:
    """A database value as GRAMMAR writes it in an answer (integral floats without '.0')."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return str(value)


def _json(value: object) -> object:
    return value if value is None or isinstance(value, (int, float, str)) else value_text(value)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class GrammarDatabase:
    """An in-memory SQLite copy of a GRAMMAR source database."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self._columns: dict[str, tuple[str, str] | str] = {}  # SQL -> answer column (a group's texts share it)

    @classmethod
    def load(cls, path: Path) -> GrammarDatabase:
        """Load a SQLite file or a ``.sql`` dump into memory."""
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            if path.suffix.lower() == ".sql":
                conn.executescript(path.read_text(encoding="utf-8"))
            else:
                with sqlite3.connect(path) as source:
                    source.backup(conn)
        except sqlite3.Error as exc:
            raise ConfigError(f"counterfactual: cannot read the database {path}: {exc}") from None
        return cls(conn)

    def answer_column(self, sql: str) -> tuple[str, str] | str:
        """(table, column) of a query projecting one plain column, or the reason it does not."""
        if sql not in self._columns:
            self._columns[sql] = self._parse_answer_column(sql)
        return self._columns[sql]

    @staticmethod
    def _parse_answer_column(sql: str) -> tuple[str, str] | str:
        import sqlglot
        from sqlglot import exp

        try:
            tree = sqlglot.parse_one(sql, read="sqlite")
        except sqlglot.errors.ParseError as exc:
            return f"the sample's SQL does not parse: {exc}"
        if not isinstance(tree, exp.Select) or len(tree.expressions) != 1:
            return "the SQL does not select exactly one column"
        column = tree.expressions[0].unalias()
        if not isinstance(column, exp.Column):
            return "the SQL's answer is not a plain column (an aggregate or expression)"
        tables = {t.alias_or_name.lower(): t.name for t in tree.find_all(exp.Table)}
        if column.table:
            table = tables.get(column.table.lower())
        else:
            table = next(iter(tables.values())) if len(tables) == 1 else None
        return (table, column.name) if table else "the answer column's table is ambiguous"

    def counterfactual(
        self, sql: str, source_rows: list[str], original: str, rng: random.Random, tries: int
    ) -> dict[str, Any]:
        """The swap for one sample: old and new value of the answer column on its source row, and the new answer
        (the SQL answer on the changed row); or ``{"reason": ...}`` when there is none."""
        found = self.answer_column(sql)
        if isinstance(found, str):
            return {"reason": found}
        table, column = found
        rows = [r.split(":", 1)[1] for r in source_rows if r.split(":", 1)[0].lower() == table.lower()]
        if len(rows) != 1:
            return {"reason": f"{len(rows)} source rows of table {table}; a counterfactual needs exactly one"}
        where, key = self._key(table, rows[0])
        current = self.conn.execute(f"SELECT {_quote(column)} FROM {_quote(table)} WHERE {where}", key).fetchall()
        if len(current) != 1:
            return {"reason": f"the source row {table}:{rows[0]} is not in the database"}
        old = current[0][0]
        values = self._candidates(table, column, old)
        rng.shuffle(values)
        for value in values[:tries]:
            answer = self._answer_with(sql, table, column, where, key, value)
            if answer is not None and answer != original:
                return {
                    "source": "sql",
                    **{"table": table, "column": column, "row": rows[0]},
                    **{"old_value": _json(old), "new_value": _json(value), "old_text": value_text(old)},
                    **{"new_text": value_text(value), "answer": answer},
                }
        return {"reason": f"no other value of {table}.{column} changes the answer (tried {min(tries, len(values))})"}

    def _key(self, table: str, row: str) -> tuple[str, list[str]]:
        pk = [
            r[1] for r in sorted(self.conn.execute(f"PRAGMA table_info({_quote(table)})"), key=lambda r: r[5]) if r[5]
        ]
        pk = pk or ["rowid"]
        parts = row.split("|")
        if len(parts) != len(pk):
            parts = [row] if len(pk) == 1 else parts
        return " AND ".join(f"CAST({_quote(c)} AS TEXT) = ?" for c in pk), parts

    def _candidates(self, table: str, column: str, old: Any) -> list[Any]:
        """The values to try for ``old`` (module docstring): the column's other values, or new names for a name
        column, in a fixed order (the caller shuffles them with the sample's seed)."""
        values = [v for (v,) in self.conn.execute(self._distinct(table, column))]
        (rows,) = self.conn.execute(f"SELECT COUNT({_quote(column)}) FROM {_quote(table)}").fetchone()
        names = [v.split() for v in values if isinstance(v, str) and len(v.split()) >= 2]
        if len(values) != rows or len(names) * 2 <= len(values):
            return [v for v in values if v != old]
        taken = set(values)
        made = {" ".join([first[0], *rest[1:]]) for first in names for rest in names if first[0] != rest[0]}
        return sorted(made - taken)

    @staticmethod
    def _distinct(table: str, column: str) -> str:
        col = _quote(column)
        return f"SELECT DISTINCT {col} FROM {_quote(table)} WHERE {col} IS NOT NULL ORDER BY {col}"

    def _answer_with(self, sql: str, table: str, column: str, where: str, key: list[str], value: Any) -> str | None:
        """The SQL answer with ``value`` set on the row (rolled back); None unless exactly one row, one value."""
        self.conn.execute("SAVEPOINT counterfactual")
        try:
            self.conn.execute(f"UPDATE {_quote(table)} SET {_quote(column)} = ? WHERE {where}", [value, *key])
            rows = self.conn.execute(sql).fetchall()
        finally:
            self.conn.execute("ROLLBACK TO counterfactual")
            self.conn.execute("RELEASE counterfactual")
        if len(rows) != 1 or len(rows[0]) != 1 or rows[0][0] is None:
            return None
        return value_text(rows[0][0])
