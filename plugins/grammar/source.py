"""The ``grammar`` dataset source: query-answer pairs with exact ground truth from a relational database.

GRAMMAR (seeds/000) Algorithm 1: SQL templates (query logic) and text templates (linguistic forms) are
filled with the database's values; each filled SQL query is executed for its answer and forms a semantic
group of text queries. Samples stream one at a time; see docs/grammar.md.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragassay import DatasetError, DatasetSource, Document, Sample, check_fractions, keep_unbalanced, stratify_group

from . import database
from .documents import DocumentMap
from .fill import (
    CompiledTemplate,
    answer_text,
    check_provenance,
    compile_template,
    count_distinct,
    distinct_values,
    fill,
    render_text,
)
from .hops import hop_gold, plan_hops
from .llm_templates import GenerateOptions, generate_templates
from .sqltext import display_sql, json_value, value_text
from .templates import load_templates, save_templates, template_problems


class SamplingOptions(BaseModel):
    """Which pairs are kept (GRAMMAR section 4.2); seeded and reproducible."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["all", "stratified", "unbalanced"] = Field(
        "all", description="'all' pairs; 'stratified': per_group per semantic group; 'unbalanced': reduce."
    )
    per_group: int = Field(1, ge=1, description="stratified: text queries kept per group (per value of `by`).")
    by: str | None = Field(None, description="stratified: text template attribute balanced within each group.")
    reduce: dict[str, float] = Field(
        default_factory=dict, description="unbalanced: table -> fraction of its text queries removed at random."
    )
    seed: int = Field(0, description="Seed of the random choices.")

    @field_validator("reduce")
    @classmethod
    def _fractions(cls, reduce: dict[str, float]) -> dict[str, float]:
        return check_fractions(reduce)


class GrammarOptions(BaseModel):
    """Options of the grammar dataset source."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(None, description="SQLite database file (opened read-only), relative to the project.")
    url: str | None = Field(None, description="SQLAlchemy URL of the database (read-only use).")
    sql_dump: str | None = Field(None, description="SQL text dump loaded into a private in-memory SQLite database.")
    templates: str = Field("templates.yaml", description="Templates file (.yaml/.yml/.toml), relative to the project.")
    generate: GenerateOptions | None = Field(
        None,
        description="Have an LLM write the templates file when it is "
        "missing (accepted and rejected templates are saved for review).",
    )
    documents: list[str] = Field(
        default_factory=list,
        description="Glob patterns of the corpus documents "
        "(what documents() yields; .md/.txt/.json/.jsonl as for [corpus] paths).",
    )
    document_map: dict[str, str | list[str]] = Field(
        default_factory=dict, description="Row -> document id patterns, merged over the templates file's 'documents'."
    )
    sampling: SamplingOptions = Field(default_factory=SamplingOptions, description="Stratified or unbalanced.")
    max_source_rows: int = Field(20, ge=1, description="Source row ids kept per answer (aggregates can have many).")

    @model_validator(mode="after")
    def _one_database(self) -> GrammarOptions:
        given = [k for k in ("path", "url", "sql_dump") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of path, url or sql_dump" + (f" (got {', '.join(given)})" if given else "")
            )
        return self


class _State:
    """What the source prepared once: database, compiled templates, documents mapping."""

    def __init__(
        self,
        db: database.SourceDatabase,
        compiled: list[CompiledTemplate],
        docs: DocumentMap,
        corpus_ids: set[str] | None,
    ):
        self.db, self.compiled, self.docs, self.corpus_ids = db, compiled, docs, corpus_ids


class GrammarSource(DatasetSource):
    """Generates grounded query-answer pairs from a relational database and SQL/text templates (GRAMMAR)."""

    name = "grammar"
    Options = GrammarOptions
    _state: _State | None = None
    stats: dict[str, dict[str, int]]

    # -- the DatasetSource contract -----------------------------------------------------------------

    def samples(self) -> Iterator[Sample]:
        """Yield the pairs, template by template, combination by combination (streaming)."""
        state = self._prepare()
        self.stats = {}
        with state.db.connect() as conn:
            for compiled in state.compiled:
                stats = self.stats.setdefault(compiled.template.id, {})
                values = [distinct_values(conn, state.db.quote, t, c) for t, c in compiled.placeholders]
                for filled in fill(conn, compiled, values, stats, self.options.max_source_rows):
                    group = self._group(conn, state, compiled, filled)
                    yield from self._sampled(group, compiled)

    def documents(self) -> Iterator[Document]:
        """The documents matched by the ``documents`` patterns."""
        if not self.options.documents:
            return iter(())
        from ragassay.plugins.files import read_documents

        return read_documents(self.options.documents, self.context)

    def plan(self) -> list[dict[str, Any]]:
        """Appendix C per SQL template: Q combinations x N text templates (upper bounds before filtering)."""
        state = self._prepare()
        rows = []
        with state.db.connect() as conn:
            for compiled in state.compiled:
                counts = [count_distinct(conn, state.db.quote, t, c) for t, c in compiled.placeholders]
                q, n = math.prod(counts), len(compiled.texts)
                rows.append(
                    {
                        "template": compiled.template.id,
                        "table": compiled.table,
                        "placeholders": ", ".join(f"{t}.{c} ({k})" for (t, c), k in zip(compiled.placeholders, counts)),
                        "Q": q,
                        "N": n,
                        "N x Q": n * q,
                        "note": "column has no values" if 0 in counts else "",
                    }
                )
        total = {
            "template": f"total (M = {len(rows)})",
            "table": "",
            "placeholders": "",
            "Q": sum(r["Q"] for r in rows),
            "N": sum(r["N"] for r in rows),
            "N x Q": sum(r["N x Q"] for r in rows),
            "note": "upper bound: queries without exactly one answer row are dropped; sampling "
            f"'{self.options.sampling.mode}' applies",
        }
        return rows + [total]

    def summary(self) -> list[dict[str, Any]]:
        """Per template, after :meth:`samples` ran: combinations, kept groups, and why the others were dropped."""
        reasons = ("combinations", "kept", "empty", "multiple answers", "null answer", "empty value")
        return [
            {"template": tid, **{k: stats.get(k, 0) for k in reasons}}
            for tid, stats in getattr(self, "stats", {}).items()
        ]

    # -- preparation -------------------------------------------------------------------------------

    def _prepare(self) -> _State:
        if self._state is None:
            self._state = self._build_state()
        return self._state

    def _open(self) -> database.SourceDatabase:
        opts, ctx = self.options, self.context
        if opts.sql_dump:
            return database.open_sql_dump(ctx.resolve(opts.sql_dump))
        if opts.path:
            return database.open_sqlite_file(ctx.resolve(opts.path))
        return database.open_url(opts.url, ctx.project_dir)

    def _build_state(self) -> _State:
        db = self._open()
        path = self.context.resolve(self.options.templates)
        if self.options.generate is not None and not path.exists():
            generated = generate_templates(db, self.context, self.options.generate)
            save_templates(generated, path, header=_GENERATED_HEADER)
            if not generated.templates:
                raise DatasetError(
                    f"grammar: the LLM wrote no acceptable template; the rejections and their "
                    f"reasons are in {path} (delete it to try again)"
                )
        parsed = load_templates(path)
        if not parsed.templates:
            raise DatasetError(f"grammar: {path} has no templates")
        compiled = []
        with db.connect() as conn:
            for tpl in parsed.templates:
                problems = template_problems(tpl, db.schema, conn)
                if problems:
                    raise DatasetError(f"grammar: {path}: template '{tpl.id}': " + "; ".join(problems))
                compiled.append(compile_template(tpl, db.schema, db.quote, lambda t: self._pk(db, t)))
                check_provenance(conn, compiled[-1])
                self._plan_hops(db, compiled[-1])
        docs = DocumentMap(
            {**parsed.documents, **self.options.document_map}, db.schema, db.quote, lambda t: self._pk(db, t)
        )
        corpus_ids = {d.id for d in self.documents()} if docs and self.options.documents else None
        return _State(db, compiled, docs, corpus_ids)

    def _plan_hops(self, db: database.SourceDatabase, compiled: CompiledTemplate) -> None:
        """The template's join path for per-hop gold (plugins/grammar/hops.py); a path it cannot read is warned of."""
        compiled.hop_plan = plan_hops(compiled.sql, db.schema, db.quote, lambda t: self._pk(db, t))
        if compiled.hop_plan.problem is not None:
            self.context.warn(
                f"grammar: template '{compiled.template.id}': no per-hop gold ({compiled.hop_plan.problem}); its "
                "samples have no hops and no hop_count"
            )

    @staticmethod
    def _pk(db: database.SourceDatabase, table: str) -> tuple[str, ...]:
        pk = db.schema.tables[table].primary_key
        return pk or (("rowid",) if db.engine.dialect.name == "sqlite" else ())

    # -- samples -----------------------------------------------------------------------------------

    def _group(self, conn, state: _State, compiled: CompiledTemplate, filled) -> list[Sample]:
        """The text queries of one filled SQL query (one semantic group)."""
        tpl = compiled.template
        values = {f"{t}.{c}": json_value(v) for (t, c), v in zip(compiled.placeholders, filled.values)}
        digest = hashlib.blake2b(
            json.dumps(list(values.values()), ensure_ascii=False, default=str).encode(), digest_size=5
        ).hexdigest()
        group_id = f"{tpl.id}/{digest}"
        doc_ids = state.docs.reference_ids(conn, filled.source_rows, compiled.answer_columns) if state.docs else []
        missing = [d for d in doc_ids if state.corpus_ids is not None and d not in state.corpus_ids]
        if missing:
            raise DatasetError(
                f"grammar: the documents mapping gives '{missing[0]}' for group {group_id}, but no "
                "corpus document has that id; fix the mapping or the 'documents' patterns"
            )
        shared = {
            "reference_answers": [answer_text(filled.answer)],
            "reference_context_ids": doc_ids,
            "group_id": group_id,
            "sql_template_id": tpl.id,
            "table": compiled.table,
            "placeholders": values,
            "sql": display_sql(tpl.sql, dict(zip(compiled.placeholders, filled.values))),
            "source_rows": [f"{t}:{'|'.join(value_text(v) for v in key)}" for t, key in filled.source_rows],
            **self._hops(conn, state, compiled, filled),
        }
        return [
            Sample(
                question_id=f"{group_id}/{item.id}",
                question=render_text(parts, filled.values),
                text_template_id=item.id,
                **item.attributes,
                **shared,
            )
            for item, parts in compiled.texts
        ]

    def _hops(self, conn, state: _State, compiled: CompiledTemplate, filled) -> dict[str, Any]:
        """``hops`` (per-hop gold) and ``hop_count`` of one filled query, where its join path is known."""
        plan = compiled.hop_plan
        if plan is None or plan.hop_count is None:
            return {}
        params = {f"p{i}": value for i, value in enumerate(filled.values)}
        hops = hop_gold(conn, plan, params, state.docs, compiled.answer_columns, self.options.max_source_rows)
        return {"hops": hops, "hop_count": plan.hop_count}

    def _sampled(self, group: list[Sample], compiled: CompiledTemplate) -> list[Sample]:
        sampling = self.options.sampling
        if sampling.mode == "stratified":
            return stratify_group(group, group[0].group_id, sampling.per_group, by=sampling.by, seed=sampling.seed)
        if sampling.mode == "unbalanced":
            return [s for s in group if keep_unbalanced(s.question_id, compiled.table, sampling.reduce, sampling.seed)]
        return group


_GENERATED_HEADER = """Written by the ragassay grammar source with an LLM (GRAMMAR Algorithm 1, Table 3 prompt).
Review before use: edit or delete templates; 'rejected' lists the candidates that failed validation and why.
Delete this file to generate again."""
