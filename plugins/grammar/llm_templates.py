"""Templates written by an LLM: g_sql with the Table 3 prompt, g_t with linguistic criteria (Algorithm 1
lines 4 and 6), through any registered generator.

Every candidate is validated and either accepted or recorded with the reason it was rejected:

- SQL: one per response line; it must be a read-only SELECT whose placeholders name real columns and that
  runs on the database, and meet the Table 3 criteria that can be checked (no ``*``, a placeholder in the
  WHERE clause, no projection of a predicate column, no duplicate);
- text: one per response line; it must use exactly the SQL template's placeholders, not be SQL, not repeat
  another, and fit its criterion (short: at most 15 words; long: at least 20; interrogative ends with '?';
  directive does not).

Accepted templates and the rejections are saved to the templates file for review.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import ComponentContext, DatasetError, GenerationRequest, GeneratorRef, RagassayError

from .database import SourceDatabase
from .prompts import TEXT_CRITERIA, sql_prompt, text_prompt
from .sqltext import PLACEHOLDER, bind_placeholders, clauses, clean_sql, select_columns, split_top_level
from .templates import SqlTemplate, TemplatesFile, TextTemplate, sql_problems, text_problems

Criterion = Literal["short", "long", "interrogative", "directive", "formal", "casual"]
_STATEMENT = re.compile(
    r"[\s(]*(SELECT|WITH|INSERT|UPDATE|DELETE|DROP|ALTER|CREATE|REPLACE|PRAGMA|ATTACH|"
    r"TRUNCATE|MERGE|GRANT|EXEC|CALL)\b",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)]|sql:)\s*", re.IGNORECASE)


class GenerateOptions(BaseModel):
    """How an LLM writes the templates file when it does not exist yet."""

    model_config = ConfigDict(extra="forbid")

    generator: GeneratorRef = Field(description="Generator component: a name, or { name, options }.")
    tables: list[str] = Field(default_factory=list, description="Target tables S_target (default: every table).")
    requirements: list[str] = Field(default_factory=list, description="Lines for Table 3's {SPECIFIC_REQUIREMENTS}.")
    criteria: list[Criterion] = Field(
        default_factory=lambda: ["short", "long"],
        description="Linguistic criteria C_t; each becomes a text template attribute.",
    )
    texts_per_criterion: int = Field(
        default=2, ge=1, le=20, description="Text templates asked per criterion (N per SQL template = criteria x this)."
    )
    params: dict[str, Any] = Field(
        default_factory=lambda: {"temperature": 0.0}, description="Decoding parameters given to the generator."
    )


def run_sync(coro):
    """Run a coroutine from synchronous code (in a worker thread if an event loop is already running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def generate_templates(db: SourceDatabase, context: ComponentContext, options: GenerateOptions) -> TemplatesFile:
    """Ask the generator for SQL then text templates; validate each; return accepted and rejected ones."""
    generator = context.build(options.generator)
    name = options.generator.name

    def ask(prompt: str) -> str:
        request = GenerationRequest(
            question=prompt, messages=[{"role": "user", "content": prompt}], params=options.params
        )
        try:
            return run_sync(generator.generate(request)).text
        except RagassayError:
            raise
        except Exception as exc:  # noqa: BLE001 - any provider error becomes one clear message
            raise DatasetError(
                f"grammar: template generation: generator '{name}' failed: {type(exc).__name__}: {exc}"
            ) from None

    out = TemplatesFile()
    with db.connect() as conn:
        for table in _targets(db, options):
            for sql in _sql_candidates(ask(sql_prompt(_schema_text(db, table), options.requirements)), table, out):
                problems = sql_problems(sql, db.schema, conn) or criteria_problems(sql)
                problems = problems or _duplicate(sql, out)
                if problems:
                    out.rejected.append({"kind": "sql", "table": table, "text": sql, "reason": "; ".join(problems)})
                    continue
                tpl_id = f"{table.lower()}_{sum(t.table == table for t in out.templates) + 1}"
                texts = _texts(ask, tpl_id, sql, options, out)
                if not texts:
                    out.rejected.append(
                        {
                            "kind": "sql",
                            "table": table,
                            "text": sql,
                            "reason": "no acceptable text template was generated for it",
                        }
                    )
                    continue
                out.templates.append(SqlTemplate(id=tpl_id, sql=clean_sql(sql), table=table, texts=texts))
    return out


def _targets(db: SourceDatabase, options: GenerateOptions) -> list[str]:
    if not options.tables:
        return list(db.schema.tables)
    missing = [t for t in options.tables if db.schema.table(t) is None]
    if missing:
        raise DatasetError(
            f"grammar: generate.tables names {', '.join(missing)}, not in the database "
            f"(tables: {', '.join(db.schema.tables)})"
        )
    return [db.schema.table(t).name for t in options.tables]


def _schema_text(db: SourceDatabase, table: str) -> str:
    """The target table and the tables its foreign keys reference (joins stay possible)."""
    related = [table] + [fk.ref_table for fk in db.schema.tables[table].foreign_keys]
    return db.schema.describe(list(dict.fromkeys(related)))


def response_lines(response: str) -> list[str]:
    """Candidate lines of a response: fences, bullets, numbering and wrapping quotes removed."""
    lines = []
    for line in str(response).splitlines():
        line = _PREFIX.sub("", line.strip()).strip().strip("`").strip()
        if line.startswith('"') and line.endswith('"') and len(line) > 1:
            line = line[1:-1].strip()
        if not line or line.startswith("```") or line.startswith("##") or line.lower() in ("sql", "```sql"):
            continue
        lines.append(line)
    return lines


def _sql_candidates(response: str, table: str, out: TemplatesFile) -> list[str]:
    found = []
    for line in response_lines(response):
        if _STATEMENT.match(line):
            found.append(line)
        else:
            out.rejected.append({"kind": "sql", "table": table, "text": line, "reason": "not a SQL template"})
    return found


def criteria_problems(sql: str) -> list[str]:
    """The Table 3 criteria a program can check: no '*', a placeholder in WHERE, no projected predicate."""
    bound = bind_placeholders(sql)
    parts = clauses(bound.sql)
    problems = []
    items = split_top_level(re.sub(r"^\s*(DISTINCT|ALL)\b", "", parts.get("SELECT", ""), flags=re.IGNORECASE))
    if any(item == "*" or item.endswith(".*") for item in items):
        problems.append("selects '*' instead of specific columns")
    if not re.search(r":p\d+", parts.get("WHERE", "")):
        problems.append("has no placeholder in the WHERE clause")
    predicate = {c.lower() for _, c in bound.placeholders}
    projected = {col.lower() for item in select_columns(parts.get("SELECT", "")) if item for col in [item[1]]}
    for column in sorted(predicate & projected):
        problems.append(f"projects {column}, which the predicate fixes")
    return problems


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _duplicate(sql: str, out: TemplatesFile) -> list[str]:
    same = [t.id for t in out.templates if _normal(clean_sql(t.sql)) == _normal(clean_sql(sql))]
    return [f"duplicates template {same[0]}"] if same else []


def _texts(ask, tpl_id: str, sql: str, options: GenerateOptions, out: TemplatesFile) -> list[TextTemplate]:
    placeholders = list(bind_placeholders(sql).placeholders)
    texts: list[TextTemplate] = []
    for criterion in options.criteria:
        attribute = TEXT_CRITERIA[criterion][0]
        for line in response_lines(ask(text_prompt(clean_sql(sql), criterion, options.texts_per_criterion))):
            item = TextTemplate(
                id=f"{criterion}{sum(t.attributes.get(attribute) == criterion for t in texts) + 1}",
                text=line,
                attributes={attribute: criterion},
            )
            probe = SqlTemplate(id=tpl_id, sql=sql, texts=[item])
            problems = text_problems(probe, placeholders) or _text_criterion(line, criterion)
            if re.match(r"\s*(SELECT|WITH)\b", line, re.IGNORECASE):
                problems = ["is SQL, not a natural-language question"]
            if any(_normal(t.text) == _normal(line) for t in texts):
                problems = problems or ["duplicates another text template"]
            if problems:
                out.rejected.append(
                    {
                        "kind": "text",
                        "template": tpl_id,
                        "criterion": criterion,
                        "text": line,
                        "reason": "; ".join(p.replace(f"text '{item.id}' ", "") for p in problems),
                    }
                )
            else:
                texts.append(item)
    return texts


def _text_criterion(line: str, criterion: str) -> list[str]:
    words = len(PLACEHOLDER.sub("X", line).split())
    if criterion == "short" and words > 15:
        return [f"has {words} words, too long for 'short' (at most 15)"]
    if criterion == "long" and words < 20:
        return [f"has {words} words, too short for 'long' (at least 20)"]
    if criterion == "interrogative" and not line.rstrip().endswith("?"):
        return ["does not end with '?', so it is not interrogative"]
    if criterion == "directive" and line.rstrip().endswith("?"):
        return ["ends with '?', so it is not directive"]
    return []
