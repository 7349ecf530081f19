"""Per-hop gold of a GRAMMAR join template: the join path from the filtered table to the answered one, and for each
hop the gold documents of the rows it touches (issue 40, "Multi-hop gold from the database").

A template such as ``SELECT c.Name FROM Client c JOIN Project p ON p.ClientID = c.ClientID WHERE p.Name =
'[Project.Name]'`` is read with sqlglot (:func:`plan_hops`):

- the *filtered* aliases are those whose columns a predicate compares with a placeholder (in WHERE or an ON);
- the *answered* alias is that of the first column of the SELECT list (for ``COUNT(*)`` and other expressions
  without a column: the alias farthest from the filtered one along the joins);
- the joins are the equalities between columns of two aliases (``ON a.x = b.y``, ``USING (x)``, or ``WHERE a.x =
  b.y``); the path is the shortest chain of joins from the filtered alias (the one farthest from the answered alias
  when several are filtered) to the answered one, ties broken by FROM order.

Hop 1 is the filtered table ("Project"), hop k the k-th table along the path ("Project -> Client"). The rows a hop
touches are the rows of its alias in the filled query's result before any aggregation: ``SELECT DISTINCT <alias
primary key> FROM <FROM> WHERE <WHERE> ORDER BY <key>`` (as the source's provenance query, alias by alias), so a
hop keeps only rows that lead to the answer. Their documents come from the same row -> document mapping as the
sample's ``reference_context_ids`` (:meth:`DocumentMap.reference_ids` with the template's answer columns), so the
hops' gold together equal the sample's gold when every table of the FROM lies on the path.

A query on one table (or whose path is one table) has ``hop_count`` 1 and no hops (``Sample.hops`` empty means one
hop). A query whose path cannot be read (UNION, WITH, a subquery in FROM or around a placeholder, tables the joins
do not connect, a table without a primary key) has neither; the source warns once per template.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.engine import Connection

from ragassay import Hop

from .database import Schema
from .documents import DocumentMap
from .sqltext import _parse, clauses


@dataclasses.dataclass(frozen=True)
class PathTable:
    """One table of a join path: its name, its alias in the query, and the query for the rows it touches."""

    table: str
    alias: str
    rows_sql: str  # SELECT DISTINCT <alias key> FROM ... WHERE ... ORDER BY <key>, with the template's :pN
    key_width: int


@dataclasses.dataclass(frozen=True)
class HopPlan:
    """The join path of a template (filtered table first), or why it could not be read (``problem``)."""

    path: tuple[PathTable, ...] = ()
    problem: str | None = None

    @property
    def hop_count(self) -> int | None:
        """How many tables the path crosses (1: a single-table question); None when the path is unknown."""
        return len(self.path) if self.problem is None else None

    def descriptions(self) -> list[str]:
        """What each hop looks up: the first table, then "<previous> -> <table>"."""
        names = [p.table for p in self.path]
        return [names[0]] + [f"{a} -> {b}" for a, b in zip(names, names[1:])] if names else []


@dataclasses.dataclass
class _Query:
    """The aliases of a query's FROM (in order) and what the planner reads of its tree."""

    aliases: dict[str, str]  # alias (lower) -> real table name
    names: dict[str, str]  # alias (lower) -> alias as written
    statement: object


def plan_hops(
    sql: str, schema: Schema, quote: Callable[[str], str], pk_of: Callable[[str], tuple[str, ...]]
) -> HopPlan:
    """The :class:`HopPlan` of a bound template SQL (``:p0`` parameters), from its parse tree."""
    query = _read_query(sql, schema)
    if isinstance(query, str):
        return HopPlan(problem=query)
    if len(query.aliases) == 1:
        ((alias, table),) = query.aliases.items()
        return HopPlan((PathTable(table, query.names[alias], "", 0),))
    edges = _edges(query, schema)
    filtered = _filtered(query, schema)
    if isinstance(filtered, str):
        return HopPlan(problem=filtered)
    path = _path(query, edges, filtered, _answered(query, schema))
    if isinstance(path, str):
        return HopPlan(problem=path)
    parts = clauses(sql)
    where = f" WHERE {parts['WHERE']}" if "WHERE" in parts else ""
    tables = []
    for alias in path:
        table = query.aliases[alias]
        key = pk_of(table)
        if not key:
            return HopPlan(problem=f"table {table} has no primary key, so its rows cannot be named")
        cols = ", ".join(f"{quote(query.names[alias])}.{quote(c)}" for c in key)
        rows_sql = f"SELECT DISTINCT {cols} FROM {parts['FROM']}{where} ORDER BY {cols}"
        tables.append(PathTable(table, query.names[alias], rows_sql, len(key)))
    return HopPlan(tuple(tables))


def _read_query(sql: str, schema: Schema) -> _Query | str:
    """The FROM aliases of a plain SELECT, or why the query has no readable join path."""
    from sqlglot import exp

    try:
        statements = _parse(sql)
    except ValueError as exc:
        return f"the SQL does not parse ({exc})"
    statement = statements[0] if len(statements) == 1 else None
    if not isinstance(statement, exp.Select) or statement.args.get("with"):
        return "not a plain SELECT (UNION, INTERSECT, EXCEPT or WITH)"
    sources = [statement.args.get("from_") or statement.args.get("from")] + list(statement.args.get("joins") or [])
    aliases: dict[str, str] = {}
    names: dict[str, str] = {}
    for source in sources:
        node = source.this if source is not None else None
        table = schema.table(node.name) if isinstance(node, exp.Table) else None
        if table is None:
            return "its FROM has a subquery or a table the schema lacks"
        alias = node.alias_or_name
        if alias.lower() in aliases:
            return f"the alias {alias} is used twice"
        aliases[alias.lower()], names[alias.lower()] = table.name, alias
    for placeholder in statement.find_all(exp.Placeholder):
        if placeholder.find_ancestor(exp.Select) is not statement:
            return "a placeholder sits inside a subquery"
    return _Query(aliases, names, statement)


def _alias_of(column, query: _Query, schema: Schema) -> str | None:
    """The alias a column belongs to: its qualifier, else the one table of the FROM that has the column."""
    if column.table:
        return column.table.lower() if column.table.lower() in query.aliases else None
    owners = [a for a, t in query.aliases.items() if schema.tables[t].column(column.name) is not None]
    return owners[0] if len(owners) == 1 else None


def _edges(query: _Query, schema: Schema) -> dict[str, list[str]]:
    """Alias -> the aliases it is joined to by a column equality (ON, USING or WHERE), in FROM order."""
    from sqlglot import exp

    pairs: set[frozenset[str]] = set()
    statement = query.statement
    for eq in statement.find_all(exp.EQ):
        if eq.find_ancestor(exp.Select) is not statement:
            continue
        left, right = eq.this, eq.expression
        if isinstance(left, exp.Column) and isinstance(right, exp.Column):
            a, b = _alias_of(left, query, schema), _alias_of(right, query, schema)
            if a and b and a != b:
                pairs.add(frozenset((a, b)))
    order = list(query.aliases)
    for position, join in enumerate(statement.args.get("joins") or [], start=1):
        for ident in join.args.get("using") or []:
            joined = order[position]
            earlier = [a for a in order[:position] if schema.tables[query.aliases[a]].column(ident.name)]
            if earlier:
                pairs.add(frozenset((earlier[0], joined)))
    return {a: [b for b in order if frozenset((a, b)) in pairs] for a in order}


def _filtered(query: _Query, schema: Schema) -> list[str] | str:
    """The aliases whose columns a predicate compares with a placeholder, in FROM order."""
    from sqlglot import exp

    found = set()
    for placeholder in query.statement.find_all(exp.Placeholder):
        predicate = placeholder.find_ancestor(exp.Predicate)
        for column in predicate.find_all(exp.Column) if predicate is not None else []:
            alias = _alias_of(column, query, schema)
            if alias is not None:
                found.add(alias)
    if not found:
        return "no placeholder is compared with a column of a known table"
    return [a for a in query.aliases if a in found]


def _answered(query: _Query, schema: Schema) -> str | None:
    """The alias of the first column of the SELECT list (None: no column there, e.g. COUNT(*))."""
    from sqlglot import exp

    for item in query.statement.expressions:
        for column in item.find_all(exp.Column):
            alias = _alias_of(column, query, schema)
            if alias is not None:
                return alias
    return None


def _distances(edges: dict[str, list[str]], start: str) -> dict[str, list[str]]:
    """Shortest path from ``start`` to every reachable alias (breadth first, neighbours in FROM order)."""
    paths = {start: [start]}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        for there in edges[here]:
            if there not in paths:
                paths[there] = paths[here] + [there]
                queue.append(there)
    return paths


def _path(query: _Query, edges: dict[str, list[str]], filtered: list[str], answered: str | None) -> list[str] | str:
    """The aliases from the filtered table to the answered one."""
    if answered is None:
        reach = _distances(edges, filtered[0])
        farthest = max(len(p) for p in reach.values())
        return next(p for p in reach.values() if len(p) == farthest)  # the first found, breadth first
    reach = _distances(edges, answered)
    connected = [a for a in filtered if a in reach]
    if not connected:
        names = ", ".join(query.names[a] for a in filtered)
        return f"no join connects the filtered table ({names}) to the answered one ({query.names[answered]})"
    start = max(connected, key=lambda a: (len(reach[a]), -filtered.index(a)))
    return list(reversed(reach[start]))


def hop_gold(
    conn: Connection,
    plan: HopPlan | None,
    params: dict[str, object],
    docs: DocumentMap | None,
    answer_columns: list[tuple[str, str]],
    max_rows: int,
) -> list[Hop]:
    """The hops of one filled query: the documents of each path table's rows (none for a one-table path or without
    a documents mapping)."""
    if plan is None or plan.problem is not None or len(plan.path) < 2 or not docs:
        return []
    hops = []
    for index, (table, description) in enumerate(zip(plan.path, plan.descriptions()), start=1):
        found = conn.execute(text(table.rows_sql), params).fetchmany(max_rows)
        rows = [(table.table, tuple(row[: table.key_width])) for row in found]
        gold = docs.reference_ids(conn, rows, answer_columns)
        hops.append(Hop(index=index, description=description, reference_context_ids=gold))
    return hops


def rows_hops(
    conn: Connection, docs: DocumentMap | None, tables: list[tuple[str, list[tuple[str, tuple]], list[tuple[str, str]]]]
) -> list[Hop]:
    """Hops given directly as (table, its rows, the columns read) along a path (a chain's join turn)."""
    if len(tables) < 2 or not docs:
        return []
    names = [t for t, _, _ in tables]
    descriptions = [names[0]] + [f"{a} -> {b}" for a, b in zip(names, names[1:])]
    return [
        Hop(index=i, description=d, reference_context_ids=docs.reference_ids(conn, rows, columns))
        for i, (d, (_, rows, columns)) in enumerate(zip(descriptions, tables), start=1)
    ]
