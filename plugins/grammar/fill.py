"""From templates to query-answer pairs (GRAMMAR Algorithm 1 lines 7-17, section 3.3, Appendix J).

For each SQL template: the distinct values of each placeholder's column (``SELECT DISTINCT column FROM
table``), their Cartesian product, each combination bound as parameters and executed for the answer. Only
queries with exactly one answer row are kept (Appendix J: a single ground truth); empty results and NULL
answers are dropped, and so are combinations with an empty placeholder value (no question to ask). The
source rows of a kept answer are found by running the template's FROM and WHERE
clauses for the primary keys of every table it names (the rows that matched, before any aggregation).

Everything is lazy: combinations are produced one at a time, so memory does not grow with the pairs.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from .database import Schema
from .sqltext import PLACEHOLDER, bind_placeholders, clauses, select_columns, table_refs, value_text
from .templates import SqlTemplate, TextTemplate, resolve_placeholders, try_run


@dataclasses.dataclass
class CompiledTemplate:
    """A validated SQL template ready to fill."""

    template: SqlTemplate
    sql: str  # with :p0.. bind parameters
    placeholders: list[tuple[str, str]]  # real (table, column), in bind order
    table: str  # the entity the template is about
    texts: list[tuple[TextTemplate, list[str | int]]]  # literal parts and placeholder positions
    answer_columns: list[tuple[str, str]]  # real (table, column) of plainly projected columns
    provenance_sql: str | None = None  # SELECT DISTINCT <primary keys> FROM ... WHERE ...
    provenance_tables: list[tuple[str, int]] = dataclasses.field(default_factory=list)  # (table, key width)
    hop_plan: Any = None  # the join path (hops.HopPlan), set by the source; None: not planned

    @property
    def statement(self):
        return text(self.sql)


@dataclasses.dataclass(frozen=True)
class Filled:
    """One filled SQL query with exactly one answer row: a semantic group."""

    values: tuple
    answer: tuple
    source_rows: tuple[tuple[str, tuple], ...]
    truncated: bool = False  # more source rows than kept


def compile_template(
    tpl: SqlTemplate, schema: Schema, quote: Callable[[str], str], pk_of: Callable[[str], tuple[str, ...]]
) -> CompiledTemplate:
    """Compile a template already checked by :func:`templates.template_problems`."""
    bound = bind_placeholders(tpl.sql)
    placeholders, _ = resolve_placeholders(bound.placeholders, schema)
    order = {(t.lower(), c.lower()): i for i, (t, c) in enumerate(placeholders)}
    texts = [(item, _text_parts(item.text, order)) for item in tpl.texts]
    entity = schema.table(tpl.table).name if tpl.table else placeholders[0][0]
    parts = clauses(bound.sql)
    refs = [(schema.table(t).name, alias) for t, alias in table_refs(parts.get("FROM", "")) if schema.table(t)]
    compiled = CompiledTemplate(tpl, bound.sql, placeholders, entity, texts, _answer_columns(parts, refs, schema))
    if (
        refs
        and not ({"UNION", "INTERSECT", "EXCEPT"} & set(parts))
        and not bound.sql.lstrip("( ").upper().startswith("WITH")
    ):
        keys = [(table, alias, pk_of(table)) for table, alias in refs]
        select = ", ".join(f"{quote(alias)}.{quote(col)}" for _, alias, pk in keys for col in pk)
        where = f" WHERE {parts['WHERE']}" if "WHERE" in parts else ""
        compiled.provenance_sql = f"SELECT DISTINCT {select} FROM {parts['FROM']}{where}"
        compiled.provenance_tables = [(table, len(pk)) for table, _, pk in keys]
    return compiled


def _text_parts(template: str, order: dict[tuple[str, str], int]) -> list[str | int]:
    parts: list[str | int] = []
    last = 0
    for match in PLACEHOLDER.finditer(template):
        parts.append(template[last : match.start()])
        parts.append(order[(match.group(1).strip().lower(), match.group(2).strip().lower())])
        last = match.end()
    parts.append(template[last:])
    return [p for p in parts if p != ""]


def _answer_columns(parts: dict[str, str], refs: list[tuple[str, str]], schema: Schema) -> list[tuple[str, str]]:
    """(table, column) of the plain columns in the select list, resolved through the FROM aliases."""
    by_alias = {alias.lower(): table for table, alias in refs}
    found = []
    for item in select_columns(parts.get("SELECT", "")):
        if item is None:
            continue
        qualifier, column = item
        candidates = (
            [by_alias[qualifier.lower()]]
            if qualifier and qualifier.lower() in by_alias
            else [t for t, _ in refs]
            if qualifier is None
            else []
        )
        for table in candidates:
            real = schema.tables[table].column(column)
            if real is not None:
                found.append((table, real))
                break
    return found


def check_provenance(conn: Connection, compiled: CompiledTemplate) -> None:
    """Drop the provenance query of a template if it does not run (e.g. a view without a key)."""
    if compiled.provenance_sql is None:
        return
    try:
        try_run(conn, compiled.provenance_sql, {f"p{i}": None for i in range(len(compiled.placeholders))})
    except SQLAlchemyError:
        compiled.provenance_sql, compiled.provenance_tables = None, []


def distinct_values(conn: Connection, quote: Callable[[str], str], table: str, column: str) -> list:
    """V_p: the distinct non-NULL values of a placeholder's column, sorted (Algorithm 1 line 10)."""
    col = quote(column)
    sql = f"SELECT DISTINCT {col} FROM {quote(table)} WHERE {col} IS NOT NULL ORDER BY {col}"
    return [row[0] for row in conn.execute(text(sql))]


def count_distinct(conn: Connection, quote: Callable[[str], str], table: str, column: str) -> int:
    """|V_p| without fetching the values (for the dry-run plan)."""
    col = quote(column)
    return int(conn.execute(text(f"SELECT COUNT(DISTINCT {col}) FROM {quote(table)}")).scalar() or 0)


def fill(
    conn: Connection,
    compiled: CompiledTemplate,
    value_lists: list[list],
    stats: dict[str, int],
    max_source_rows: int = 20,
) -> Iterator[Filled]:
    """Every combination with exactly one non-NULL answer row; ``stats`` counts what was dropped and why."""
    statement = text(compiled.sql)
    provenance = text(compiled.provenance_sql) if compiled.provenance_sql else None
    for combo in itertools.product(*value_lists):
        stats["combinations"] = stats.get("combinations", 0) + 1
        if any(not value_text(value).strip() for value in combo):  # "Where is ?" has no question to ask
            stats["empty value"] = stats.get("empty value", 0) + 1
            continue
        params = {f"p{i}": value for i, value in enumerate(combo)}
        rows = conn.execute(statement, params).fetchmany(2)
        reason = (
            "empty"
            if not rows
            else "multiple answers"
            if len(rows) > 1
            else "null answer"
            if any(v is None for v in rows[0])
            else None
        )
        if reason is not None:
            stats[reason] = stats.get(reason, 0) + 1
            continue
        sources, truncated = (), False
        if provenance is not None:
            found = conn.execute(provenance, params).fetchmany(max_source_rows + 1)
            truncated = len(found) > max_source_rows
            sources = tuple(_split_keys(row, compiled.provenance_tables) for row in found[:max_source_rows])
            sources = tuple(dict.fromkeys(pair for row in sources for pair in row))
        stats["kept"] = stats.get("kept", 0) + 1
        yield Filled(tuple(combo), tuple(rows[0]), sources, truncated)


def _split_keys(row: tuple, tables: list[tuple[str, int]]) -> list[tuple[str, tuple]]:
    out, i = [], 0
    for table, width in tables:
        key = tuple(row[i : i + width])
        i += width
        if all(v is not None for v in key):  # an outer join may leave a side empty
            out.append((table, key))
    return out


def render_text(parts: list[str | int], values: tuple) -> str:
    """A text query: the text template with each placeholder replaced by its value (Algorithm 1 line 16).

    Whitespace of the template's own text is collapsed (and trimmed at the ends); values are kept exactly
    as stored ("New  York  Times" keeps its double spaces).
    """
    pieces = [re.sub(r"\s+", " ", p) if isinstance(p, str) else value_text(values[p]) for p in parts]
    if parts and isinstance(parts[0], str):
        pieces[0] = pieces[0].lstrip()
    if parts and isinstance(parts[-1], str):
        pieces[-1] = pieces[-1].rstrip()
    return "".join(pieces)


def answer_text(answer: tuple) -> str:
    """The ground-truth answer: the single row's values, comma-separated when there are several."""
    return ", ".join(value_text(v) for v in answer)
