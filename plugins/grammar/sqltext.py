"""SQL template text: placeholders, the SELECT-only check, bound parameters and clause parsing.

Templates use the paper's placeholder format ``[Table.Column]`` (section 3.1, Table 3), bare or quoted
(``WHERE Name = '[Company.Name]'``). A template is turned into SQL with named bind parameters (``:p0``,
``:p1``, one per distinct placeholder) so values are always bound, never formatted into SQL.

The SELECT-only check and the table and column extraction parse the SQL with sqlglot (SQLite dialect): one
statement, a query (SELECT, WITH ... SELECT, UNION, ...), no comment, and no node that writes or changes
anything anywhere in the tree; the database is opened read-only as well. A small scanner splits the text into
literals and code for binding placeholders and finding the top-level clauses.
"""

from __future__ import annotations

import dataclasses
import re

from ragassay import MissingDependencyError

PLACEHOLDER = re.compile(r"\[([^\[\].'\"]+)\.([^\[\].'\"]+)\]")
_CLAUSE = re.compile(
    r"\b(SELECT|FROM|WHERE|GROUP\s+BY|HAVING|ORDER\s+BY|LIMIT|OFFSET|UNION|INTERSECT|EXCEPT|WINDOW)\b", re.IGNORECASE
)
_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


@dataclasses.dataclass(frozen=True)
class Segment:
    """A piece of SQL text: code, a string literal, a quoted identifier, or a comment."""

    kind: str  # code | string | ident | comment
    text: str


def clean_sql(sql: str) -> str:
    """Typographic quotes made ASCII, surrounding space and a trailing semicolon removed."""
    sql = sql.translate(_TYPOGRAPHIC).strip()
    return sql[:-1].rstrip() if sql.endswith(";") else sql


def scan(sql: str) -> list[Segment]:
    """Split SQL into segments; raises ValueError on an unterminated literal or comment."""
    segments, code, i = [], [], 0
    while i < len(sql):
        ch = sql[i]
        if ch in "'\"`" or sql.startswith(("--", "/*"), i):
            if code:
                segments.append(Segment("code", "".join(code)))
                code = []
            end = _literal_end(sql, i)
            kind = "string" if ch == "'" else "comment" if ch in "-/" else "ident"
            segments.append(Segment(kind, sql[i:end]))
            i = end
        else:
            code.append(ch)
            i += 1
    if code:
        segments.append(Segment("code", "".join(code)))
    return segments


def _literal_end(sql: str, start: int) -> int:
    if sql.startswith("--", start):
        end = sql.find("\n", start)
        return len(sql) if end < 0 else end
    if sql.startswith("/*", start):
        end = sql.find("*/", start + 2)
        if end < 0:
            raise ValueError("unterminated /* comment")
        return end + 2
    quote, i = sql[start], start + 1
    while i < len(sql):
        if sql[i] == quote:
            if i + 1 < len(sql) and sql[i + 1] == quote:  # doubled quote escapes itself
                i += 2
                continue
            return i + 1
        i += 1
    raise ValueError(f"unterminated {'string literal' if quote == chr(39) else 'quoted identifier'}")


#: Statements and clauses that write or change something: never allowed in a template.
_WRITES = (
    "Insert",
    "Update",
    "Delete",
    "Drop",
    "Create",
    "Alter",
    "AlterTable",
    "Merge",
    "Into",
    "Command",
    "Pragma",
    "Attach",
    "Detach",
    "Grant",
    "Revoke",
    "TruncateTable",
    "Copy",
    "Use",
    "Set",
    "Transaction",
)


def _sqlglot():
    try:
        import sqlglot
    except ImportError as exc:  # pragma: no cover - it is a dependency of ragassay
        raise MissingDependencyError(
            f"the grammar source needs sqlglot ({exc}). Install it with: pip install 'sqlglot>=25'"
        ) from exc
    return sqlglot


def _parse(sql: str) -> list:
    """The statements of ``sql`` parsed by sqlglot (placeholders made literals); raises ValueError."""
    sqlglot = _sqlglot()
    from sqlglot.errors import ParseError, TokenError

    try:
        return [statement for statement in sqlglot.parse(PLACEHOLDER.sub("NULL", sql), read="sqlite") if statement]
    except (ParseError, TokenError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(_readable(reason)) from None


def _readable(reason: str) -> str:
    if reason.startswith("Error tokenizing"):
        return "unterminated string literal or quoted identifier"
    if reason.startswith("Expecting )") or "Expecting )" in reason:
        return f"unbalanced parentheses ({reason})"
    return reason


def select_only_problems(sql: str) -> list[str]:
    """Why ``sql`` is not a single read-only SELECT (empty list: it is); parsed with sqlglot."""
    sql = clean_sql(sql)
    if not sql:
        return ["the SQL is empty"]
    try:
        segments = scan(sql)
        statements = _parse(sql)
    except ValueError as exc:
        return [f"does not parse: {exc}"]
    problems = []
    if any(s.kind == "comment" for s in segments):
        problems.append("contains a comment; remove it")
    if len(statements) != 1:
        problems.append(
            f"contains {len(statements)} statements (';' separates more than one statement)"
            if statements
            else "does not parse: no statement"
        )
    if not statements:
        return problems
    from sqlglot import exp

    first = statements[0]
    if not isinstance(first, exp.Query):
        keyword = sql.split(None, 1)[0].upper()
        problems.append(f"is not a SELECT query (starts with {keyword!r}); only SELECT is allowed")
    writes = sorted(
        {_write_name(node) for statement in statements for node in statement.walk() if type(node).__name__ in _WRITES}
    )
    if writes:
        problems.append(f"uses {', '.join(writes)}: only read-only SELECT queries are allowed")
    return problems


def _write_name(node) -> str:
    name = type(node).__name__
    if name == "Command":
        return str(node.this).upper()
    return {"AlterTable": "ALTER", "TruncateTable": "TRUNCATE"}.get(name, name.upper())


@dataclasses.dataclass(frozen=True)
class BoundSQL:
    """A template with its placeholders replaced by bind parameters ``:p0``, ``:p1``, ..."""

    sql: str
    placeholders: tuple[tuple[str, str], ...]  # (table, column) as written, in order of first appearance


def bind_placeholders(sql: str) -> BoundSQL:
    """Replace each ``[Table.Column]`` (bare or quoted) by ``:pN``; raises ValueError where it cannot."""
    sql = clean_sql(sql)
    order: dict[tuple[str, str], str] = {}

    def param(match: re.Match) -> str:
        key = (match.group(1).strip(), match.group(2).strip())
        folded = (key[0].lower(), key[1].lower())
        if folded not in order:
            order[folded] = f":p{len(order)}"
            names.append(key)
        return order[folded]

    names: list[tuple[str, str]] = []
    out = []
    for segment in scan(sql):
        whole = PLACEHOLDER.fullmatch(segment.text[1:-1]) if segment.kind in ("string", "ident") else None
        if whole:
            out.append(param(whole))
        elif segment.kind == "code":
            out.append(PLACEHOLDER.sub(param, segment.text))
        elif PLACEHOLDER.search(segment.text):
            raise ValueError(
                f"placeholder inside the literal {segment.text}: write the placeholder on its own, "
                "e.g. Name = '[Company.Name]'"
            )
        else:
            out.append(segment.text)
    return BoundSQL("".join(out), tuple(names))


def masked(sql: str) -> str:
    """``sql`` with string literal contents blanked (same length), so clause keywords in data are ignored."""
    return "".join(s.text if s.kind != "string" else "'" + " " * (len(s.text) - 2) + "'" for s in scan(sql))


def clauses(sql: str) -> dict[str, str]:
    """Top-level clauses of a bound SELECT: 'select', 'from', 'where', ... (upper-case keyword, text)."""
    mask = masked(sql)
    depth, depths = 0, []
    for ch in mask:
        depth += ch == "("
        depth -= ch == ")"
        depths.append(depth)
    marks = [
        (m.start(), m.end(), " ".join(m.group(1).upper().split()))
        for m in _CLAUSE.finditer(mask)
        if depths[m.start()] == 0
    ]
    found: dict[str, str] = {}
    for i, (_start, end, name) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else len(sql)
        if name not in found:
            found[name] = sql[end:stop].strip()
    return found


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside parentheses and literals."""
    mask = masked(text)
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(mask):
        depth += ch == "("
        depth -= ch == ")"
        if ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def unquote(name: str) -> str:
    return name[1:-1] if name[:1] in '"`' and name[-1:] in '"`' else name


def table_refs(from_clause: str) -> list[tuple[str, str]]:
    """(table, alias) of the tables named in a FROM clause (alias = table when none); subqueries skipped."""
    from sqlglot import exp

    try:
        statements = _parse(f"SELECT 1 FROM {from_clause}")
    except ValueError:
        return []
    select = statements[0] if statements else None
    if select is None:
        return []
    sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
    tables = [source.this for source in sources if source is not None and isinstance(source.this, exp.Table)]
    return [(table.name, table.alias_or_name) for table in tables]


def select_columns(select_clause: str) -> list[tuple[str | None, str] | None]:
    """(qualifier, column) of each plain column in a select list; None for expressions."""
    from sqlglot import exp

    try:
        statements = _parse(f"SELECT {select_clause}")
    except ValueError:
        return []
    out: list[tuple[str | None, str] | None] = []
    for item in statements[0].expressions if statements else []:
        column = item.unalias() if isinstance(item, exp.Alias) else item
        if isinstance(column, exp.Column) and not isinstance(column.this, exp.Star):
            out.append((column.table or None, column.name))
        else:
            out.append(None)
    return out


def sql_literal(value: object) -> str:
    """A value written as a SQL literal, for display only (queries always bind their values)."""
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def display_sql(template_sql: str, values: dict[tuple[str, str], object]) -> str:
    """The filled SQL query shown to people (the semantic group's query logic)."""
    lowered = {(t.lower(), c.lower()): v for (t, c), v in values.items()}

    def literal(match: re.Match) -> str:
        return sql_literal(lowered.get((match.group(1).strip().lower(), match.group(2).strip().lower())))

    # one pass over quoted and bare placeholders: a value that looks like a placeholder is never substituted again
    either = re.compile(r"(['\"])(" + PLACEHOLDER.pattern + r")\1|" + PLACEHOLDER.pattern)
    return either.sub(lambda m: literal(PLACEHOLDER.fullmatch(m.group(2) or m.group(0))), clean_sql(template_sql))


def value_text(value: object) -> str:
    """A database value as it appears in a text query or an answer (integral floats without '.0')."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def json_value(value: object) -> object:
    """A database value as JSON can hold it (numbers and strings kept, others as text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return value_text(value)
