"""Mapping database rows to the documents that hold their facts, for ``reference_context_ids``.

The mapping (templates file ``documents:`` or the source's ``document_map`` option) has keys ``Table`` (the
documents of any fact of a row) or ``Table.Column`` (the documents holding that column's fact, e.g. a date
that only a project report states), and values that are document id patterns with ``{Column}`` fields::

    Project: corpus/projects/project-{ProjectID}.md
    Project.Budget: [corpus/reports/report-{ProjectID}.md]

A sample's reference documents are, for each source row of its answer, the patterns of the answer columns
of that row's table when the mapping names them, and else the table's patterns, filled with the row.
"""

from __future__ import annotations

import string
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection

from ragassay import DatasetError

from .database import Schema
from .sqltext import value_text

ROW_CACHE = 4096


def _patterns(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


class DocumentMap:
    """Row -> document ids, validated against the schema; row values fetched once (LRU cache)."""

    def __init__(self, mapping: dict[str, str | list[str]], schema: Schema, quote, pk_of):
        self.schema = schema
        self.quote = quote
        self.pk_of = pk_of  # table name -> primary key column names (rowid for keyless SQLite tables)
        self.default: dict[str, list[str]] = {}
        self.by_column: dict[tuple[str, str], list[str]] = {}
        self.fields: dict[str, dict[str, str]] = {}  # table -> field as written -> real column
        self._rows: OrderedDict[tuple[str, tuple], dict[str, Any]] = OrderedDict()
        for key, value in mapping.items():
            self._add(key, _patterns(value))

    def __bool__(self) -> bool:
        return bool(self.default or self.by_column)

    def _add(self, key: str, patterns: list[str]) -> None:
        table_name, _, column_name = key.partition(".")
        table = self.schema.table(table_name)
        if table is None:
            raise DatasetError(
                f"grammar: documents mapping '{key}': no table '{table_name}' (tables: {', '.join(self.schema.tables)})"
            )
        if column_name:
            column = table.column(column_name)
            if column is None:
                raise DatasetError(
                    f"grammar: documents mapping '{key}': table {table.name} has no column '{column_name}'"
                )
            self.by_column[(table.name, column)] = patterns
        else:
            self.default[table.name] = patterns
        fields = self.fields.setdefault(table.name, {})
        for pattern in patterns:
            for _, field, _, _ in string.Formatter().parse(pattern):
                if field is None:
                    continue
                real = table.column(field)
                if real is None:
                    raise DatasetError(
                        f"grammar: documents mapping '{key}': pattern {pattern!r} uses {{{field}}}, "
                        f"which is not a column of {table.name} (columns: {', '.join(table.columns)})"
                    )
                fields[field] = real

    def reference_ids(
        self, conn: Connection, rows: Iterable[tuple[str, tuple]], answer_columns: Iterable[tuple[str, str]]
    ) -> list[str]:
        """Document ids for the source rows ``(table, primary key values)`` of one answer, in order, unique."""
        answer_columns = list(answer_columns)
        ids: dict[str, None] = {}
        for table, key in rows:
            patterns = [p for (t, c) in answer_columns if t == table for p in self.by_column.get((t, c), [])]
            patterns = patterns or self.default.get(table, [])
            if not patterns:
                continue
            values = self._row(conn, table, key)
            for pattern in patterns:
                ids[pattern.format_map(values)] = None
        return list(ids)

    def _row(self, conn: Connection, table: str, key: tuple) -> dict[str, Any]:
        """The mapping's fields of one row (from the key alone when the fields are key columns)."""
        fields = self.fields.get(table, {})
        pk = self.pk_of(table)
        by_pk = dict(zip(pk, key))
        if all(real in by_pk for real in fields.values()):
            return {field: value_text(by_pk[real]) for field, real in fields.items()}
        cached = self._rows.get((table, key))
        if cached is None:
            columns = sorted(set(fields.values()))
            where = " AND ".join(f"{self.quote(c)} = :k{i}" for i, c in enumerate(pk))
            sql = f"SELECT {', '.join(self.quote(c) for c in columns)} FROM {self.quote(table)} WHERE {where}"
            row = conn.execute(text(sql), {f"k{i}": v for i, v in enumerate(key)}).first()
            by_column = dict(zip(columns, row)) if row is not None else {}
            cached = {field: value_text(by_column.get(real)) for field, real in fields.items()}
            self._rows[(table, key)] = cached
            if len(self._rows) > ROW_CACHE:
                self._rows.popitem(last=False)
        else:
            self._rows.move_to_end((table, key))
        return cached
