"""The templates file: SQL templates (query logic) with their text templates, and the documents mapping.

YAML (``.yaml``/``.yml``) or TOML (``.toml``)::

    templates:
      - id: project_location
        table: Project                      # the entity (unbalanced sampling); default: first placeholder's
        sql: SELECT Location FROM Project WHERE Name = '[Project.Name]'
        texts:
          - { id: s1, text: "Where is [Project.Name]?", attributes: { query_length: short } }
    documents:                              # database row -> ids of the documents that hold its facts
      Project: corpus/projects/project-{ProjectID}.md
    rejected: []                            # written by LLM generation for review; ignored when loading

A template is validated against the database (:func:`template_problems`): it parses, is a SELECT, every
placeholder names a real column, every text template uses exactly the SQL template's placeholders, and it
runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from ragassay import DatasetError

from .database import Schema
from .sqltext import PLACEHOLDER, bind_placeholders, select_only_problems

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RESERVED = {
    "question_id",
    "question",
    "metadata",
    "reference_answers",
    "reference_contexts",
    "reference_context_ids",
    "is_answerable",
    "group_id",
    "sql_template_id",
    "text_template_id",
    "table",
    "placeholders",
    "sql",
    "source_rows",
    "hops",
    "hop_count",
}


class TextTemplate(BaseModel):
    """One linguistic form of a query logic, with the attributes hypotheses split on."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Id, unique within its SQL template.")
    text: str = Field(description="Text with the same [Table.Column] placeholders as the SQL template.")
    attributes: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Free attributes copied onto each sample, e.g. query_length: long."
    )


class SqlTemplate(BaseModel):
    """A query logic: a SELECT with [Table.Column] placeholders, and its text templates."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Id, unique in the file.")
    sql: str = Field(description="SELECT query with [Table.Column] placeholders.")
    table: str | None = Field(default=None, description="Entity the template is about (default: first placeholder's).")
    description: str = Field(default="", description="Free text.")
    texts: list[TextTemplate] = Field(min_length=1, description="Text templates (at least one).")


class TemplatesFile(BaseModel):
    """A whole templates file."""

    model_config = ConfigDict(extra="forbid")

    templates: list[SqlTemplate] = Field(default_factory=list, description="SQL templates.")
    documents: dict[str, str | list[str]] = Field(
        default_factory=dict, description="'Table' or 'Table.Column' -> document id pattern(s) with {Column} fields."
    )
    rejected: list[dict[str, Any]] = Field(default_factory=list, description="Rejected generated templates.")


def load_templates(path: Path) -> TemplatesFile:
    """Read and validate the structure of a templates file (ids unique, reserved names avoided)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(
            f"grammar: templates file not found: {path}; write one (see docs/grammar.md) or "
            "set the 'generate' option to have an LLM write it"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"grammar: cannot read templates file {path}: {exc}") from None
    data = _parse(raw, path)
    try:
        parsed = TemplatesFile.model_validate(data or {})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise DatasetError(f"grammar: {path}: {problems}") from None
    _check_ids(parsed, path)
    return parsed


def _parse(raw: str, path: Path) -> Any:
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(raw)
        except tomllib.TOMLDecodeError as exc:
            raise DatasetError(f"grammar: {path} is not valid TOML: {exc}") from None
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise DatasetError(f"grammar: {path}: templates files are .yaml, .yml or .toml")
    import yaml

    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise DatasetError(f"grammar: {path} is not valid YAML: {str(exc).splitlines()[0]}") from None


def _check_ids(parsed: TemplatesFile, path: Path) -> None:
    seen: set[str] = set()
    for tpl in parsed.templates:
        if tpl.id in seen:
            raise DatasetError(f"grammar: {path}: template id '{tpl.id}' appears twice; ids must be unique")
        seen.add(tpl.id)
        text_ids = [t.id for t in tpl.texts]
        if len(set(text_ids)) != len(text_ids):
            raise DatasetError(f"grammar: {path}: template '{tpl.id}' repeats a text template id")
        for item in tpl.texts:
            clash = RESERVED & set(item.attributes)
            if clash:
                raise DatasetError(
                    f"grammar: {path}: template '{tpl.id}' text '{item.id}': attribute "
                    f"{', '.join(sorted(clash))} is reserved; rename it"
                )


def save_templates(parsed: TemplatesFile, path: Path, header: str = "") -> None:
    """Write templates as YAML (the format for review and editing)."""
    import yaml

    if path.suffix.lower() not in (".yaml", ".yml"):
        raise DatasetError(f"grammar: generated templates are saved as YAML; name the file .yaml, not {path.name}")
    body = yaml.safe_dump(
        parsed.model_dump(mode="json", exclude_defaults=False), sort_keys=False, allow_unicode=True, width=120
    )
    comment = "".join(f"# {line}\n" for line in header.splitlines())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(comment + body, encoding="utf-8")


def resolve_placeholders(
    placeholders: tuple[tuple[str, str], ...], schema: Schema
) -> tuple[list[tuple[str, str]], list[str]]:
    """Real (table, column) names of placeholders, and a problem for each that names nothing."""
    resolved, problems = [], []
    for table_name, column_name in placeholders:
        table = schema.table(table_name)
        if table is None:
            problems.append(
                f"placeholder [{table_name}.{column_name}]: no table '{table_name}' "
                f"(tables: {', '.join(schema.tables)})"
            )
            continue
        column = table.column(column_name)
        if column is None:
            problems.append(
                f"placeholder [{table_name}.{column_name}]: table {table.name} has no column "
                f"'{column_name}' (columns: {', '.join(table.columns)})"
            )
            continue
        resolved.append((table.name, column))
    return resolved, problems


def text_problems(tpl: SqlTemplate, placeholders: list[tuple[str, str]]) -> list[str]:
    """Each text template must use exactly the SQL template's placeholders."""
    wanted = {(t.lower(), c.lower()) for t, c in placeholders}
    problems = []
    for item in tpl.texts:
        used = {(m.group(1).strip().lower(), m.group(2).strip().lower()) for m in PLACEHOLDER.finditer(item.text)}
        if not item.text.strip():
            problems.append(f"text '{item.id}' is empty")
        for t, c in sorted(wanted - used):
            problems.append(f"text '{item.id}' does not mention [{t}.{c}], so its queries would be ambiguous")
        for t, c in sorted(used - wanted):
            problems.append(f"text '{item.id}' mentions [{t}.{c}], which the SQL template does not use")
    return problems


def sql_problems(sql: str, schema: Schema, conn: Connection | None, table: str | None = None) -> list[str]:
    """Why a SQL template cannot be used: not a SELECT, no or unknown placeholders, does not run."""
    problems = select_only_problems(sql)
    if problems:
        return problems
    try:
        bound = bind_placeholders(sql)
    except ValueError as exc:
        return [str(exc)]
    if not bound.placeholders:
        return ["has no [Table.Column] placeholder, so it gives a single query; add one to the WHERE clause"]
    resolved, problems = resolve_placeholders(bound.placeholders, schema)
    if table is not None and schema.table(table) is None:
        problems.append(f"table '{table}' does not exist (tables: {', '.join(schema.tables)})")
    if problems or conn is None:
        return problems
    try:
        try_run(conn, bound.sql, {f"p{i}": None for i in range(len(resolved))})
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        return [f"does not run on the database: {reason}"]
    return []


def template_problems(tpl: SqlTemplate, schema: Schema, conn: Connection | None) -> list[str]:
    """Why a template cannot be used (empty list: it can). ``conn`` given: it must also run."""
    problems = sql_problems(tpl.sql, schema, conn, tpl.table)
    if problems:
        return problems
    return text_problems(tpl, list(bind_placeholders(tpl.sql).placeholders))


def try_run(conn: Connection, sql: str, params: dict[str, Any]) -> None:
    """Run a query once (first row only); on databases with transactional errors, inside a savepoint."""
    if conn.dialect.name == "sqlite":
        conn.execute(text(sql), params).fetchmany(1)
        return
    with conn.begin_nested():
        conn.execute(text(sql), params).fetchmany(1)
