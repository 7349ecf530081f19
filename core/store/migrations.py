"""Ordered schema migrations, applied inside the caller's transaction; each bumps ``schema_version``.

Every migration is frozen: it holds the explicit DDL of its own version (never ``create_all`` of the current
tables over old data), so a database of any earlier version is upgraded step by step to the same schema a new
database gets. To change the schema: edit :mod:`schema`, bump ``SCHEMA_VERSION`` and append a migration here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    text,
)

from .schema import schema_version

_V1_TABLES = ("schema_version", "runs", "run_systems", "run_samples", "outputs", "metric_values", "judgements")


def _v1_initial(conn: Connection) -> None:
    """Version 1: runs, run_systems, run_samples, outputs, metric_values, judgements (DDL as released)."""
    v1 = MetaData()
    Table("schema_version", v1, Column("version", Integer, nullable=False))
    Table(
        "runs",
        v1,
        Column("id", String(64), primary_key=True),
        Column("fingerprint", String(64), nullable=False, index=True),
        Column("project", Text, nullable=False),
        Column("config_path", Text, nullable=False),
        Column("config_json", Text, nullable=False),
        Column("spec_json", Text, nullable=False),
        Column("ragassay_version", String(32), nullable=False),
        Column("status", String(16), nullable=False),
        Column("sample_count", Integer, nullable=False),
        Column("created_at", Float, nullable=False),
        Column("updated_at", Float, nullable=False),
    )
    Table(
        "run_systems",
        v1,
        Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        Column("name", Text, primary_key=True),
        Column("position", Integer, nullable=False),
        Column("spec_json", Text, nullable=False),
    )
    Table(
        "run_samples",
        v1,
        Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        Column("question_id", Text, primary_key=True),
        Column("position", Integer, nullable=False),
        Column("sample_json", Text, nullable=False),
    )
    outputs = Table(
        "outputs",
        v1,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        Column("system", Text, nullable=False),
        Column("question_id", Text, nullable=False),
        Column("status", String(8), nullable=False),
        Column("error", Text),
        Column("answer", Text),
        Column("output_json", Text),
        Column("latency_s", Float),
        Column("input_tokens", Integer, nullable=False, default=0),
        Column("output_tokens", Integer, nullable=False, default=0),
        Column("created_at", Float, nullable=False),
        UniqueConstraint("run_id", "system", "question_id", name="uq_output_unit"),
    )
    Table(
        "metric_values",
        v1,
        Column("output_id", Integer, ForeignKey("outputs.id", ondelete="CASCADE"), primary_key=True),
        Column("metric", Text, primary_key=True),
        Column("value", Float),
        Column("unscored_reason", Text),
        Column("details_json", Text),
    )
    Table(
        "judgements",
        v1,
        Column("output_id", Integer, ForeignKey("outputs.id", ondelete="CASCADE"), primary_key=True),
        Column("judge", Text, primary_key=True),
        Column("verdict", Text, nullable=False),
        Column("score", Float),
        Column("explanation", Text),
        Column("judge_id", Text),
    )
    Index("ix_outputs_run_system", outputs.c.run_id, outputs.c.system)
    v1.create_all(conn)


_USAGE_COLUMNS = [
    "calls INTEGER NOT NULL DEFAULT 0",
    "cached_tokens INTEGER NOT NULL DEFAULT 0",
    "cache_hits INTEGER NOT NULL DEFAULT 0",
    "cost_usd FLOAT",
    "unpriced TEXT",
]
_EVAL_COLUMNS = ["input_tokens INTEGER NOT NULL DEFAULT 0", "output_tokens INTEGER NOT NULL DEFAULT 0", *_USAGE_COLUMNS]
V2_COLUMNS: dict[str, list[str]] = {
    "runs": ["description TEXT", "warnings_json TEXT"],
    "outputs": [
        "system_key VARCHAR(64)",
        "sample_key VARCHAR(64)",
        "retrieved INTEGER",
        "retrieved_count INTEGER",
        "reused_from INTEGER",
        *_USAGE_COLUMNS,
    ],
    "metric_values": ["metric_key VARCHAR(64)", *_EVAL_COLUMNS],
    "judgements": ["details_json TEXT", "judge_key VARCHAR(64)", *_EVAL_COLUMNS],
}


def _v2_columns_and_keys(conn: Connection) -> None:
    """Version 2: new columns (see :mod:`schema`), backfilled from the stored JSON of version-1 rows."""
    for table, columns in V2_COLUMNS.items():
        for column in columns:
            conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column}"))
    conn.execute(text("CREATE INDEX ix_outputs_reuse ON outputs (system_key, sample_key)"))
    _create_run_leases(conn)
    _backfill_v2(conn)


def _create_run_leases(conn: Connection) -> None:
    """Version 2 (leases part): the ``run_leases`` table, as it was at version 2."""
    Table(
        "run_leases",
        MetaData(),
        Column("key", String(64), primary_key=True),
        Column("run_id", String(64)),
        Column("owner", String(64), nullable=False),
        Column("host", Text, nullable=False),
        Column("pid", Integer, nullable=False),
        Column("acquired_at", Float, nullable=False),
        Column("heartbeat_at", Float, nullable=False),
    ).create(conn)


def _backfill_v2(conn: Connection) -> None:
    """Derive the v2 columns of existing rows. Keys of v1 runs are computed from their stored specs, which
    lack the corpus hash, so they are prefixed ``v1:`` and never match a v2 run's keys (no unsafe reuse)."""
    from ..llm.pricing import PriceTable
    from ..models import RAGOutput

    runs = {row.id: row for row in conn.execute(text("SELECT id, config_json, spec_json FROM runs"))}
    system_keys = {
        (r.run_id, r.name): "v1:" + _digest(r.spec_json)[:61]
        for r in conn.execute(text("SELECT run_id, name, spec_json FROM run_systems"))
    }
    sample_keys = {
        (r.run_id, r.question_id): _digest(r.sample_json)
        for r in conn.execute(text("SELECT run_id, question_id, sample_json FROM run_samples"))
    }
    prices = {
        run_id: PriceTable(((json.loads(r.config_json or "{}").get("llm") or {}).get("prices")) or {})
        for run_id, r in runs.items()
    }
    rows = conn.execute(text("SELECT id, run_id, system, question_id, output_json FROM outputs")).all()
    for row in rows:
        values: dict[str, Any] = {
            "id": row.id,
            "system_key": system_keys.get((row.run_id, row.system)),
            "sample_key": sample_keys.get((row.run_id, row.question_id)),
        }
        output = RAGOutput.model_validate_json(row.output_json) if row.output_json else None
        values.update(output_columns(output, prices[row.run_id]))
        conn.execute(
            text(
                "UPDATE outputs SET system_key = :system_key, sample_key = :sample_key, "
                "retrieved = :retrieved, retrieved_count = :retrieved_count, calls = :calls, "
                "cached_tokens = :cached_tokens, cache_hits = :cache_hits, cost_usd = :cost_usd, "
                "unpriced = :unpriced WHERE id = :id"
            ),
            values,
        )
    for run_id, run in runs.items():
        spec = json.loads(run.spec_json or "{}")
        for table, field, column in (("metric_values", "metrics", "metric"), ("judgements", "judges", "judge")):
            for label, component in (spec.get(field) or {}).items():
                key = "v1:" + _digest(json.dumps(component, sort_keys=True))[:61]
                conn.execute(
                    text(
                        f"UPDATE {table} SET {column}_key = :key WHERE {column} = :label AND output_id IN "
                        "(SELECT id FROM outputs WHERE run_id = :run_id)"
                    ),
                    {"key": key, "label": label, "run_id": run_id},
                )


def output_columns(output: Any, prices: Any) -> dict[str, Any]:
    """The v2 columns derived from a stored :class:`RAGOutput` (None for a failed unit) and a price table."""
    if output is None:
        return {
            "retrieved": None,
            "retrieved_count": None,
            "calls": 0,
            "cached_tokens": 0,
            "cache_hits": 0,
            "cost_usd": None,
            "unpriced": None,
        }
    usage = output.usage
    unpriced = prices.unpriced(usage)
    if not usage.by_model and (usage.input_tokens or usage.output_tokens):
        unpriced = ["(tokens reported without a model)"]
    return {
        "retrieved": None if output.retrieved is None else int(output.retrieved),
        "retrieved_count": sum(1 for context in output.contexts if context.strip()),
        "calls": usage.calls,
        "cached_tokens": usage.cached_tokens,
        "cache_hits": usage.cache_hits,
        "cost_usd": None if unpriced else prices.cost(usage),
        "unpriced": ", ".join(unpriced) or None,
    }


def _v3_usage_columns() -> list[Column]:
    """The evaluation-cost columns of a metric value or judgement, as they are at version 3."""
    return [
        Column("input_tokens", Integer, nullable=False, server_default="0"),
        Column("output_tokens", Integer, nullable=False, server_default="0"),
        Column("calls", Integer, nullable=False, server_default="0"),
        Column("cached_tokens", Integer, nullable=False, server_default="0"),
        Column("cache_hits", Integer, nullable=False, server_default="0"),
        Column("cost_usd", Float),
        Column("unpriced", Text),
    ]


def _v3_repeat_in_key(conn: Connection) -> None:
    """Version 3: ``repeat`` joins the primary key of ``metric_values`` and ``judgements`` (``run --repeat N``).

    SQLite cannot change a primary key, so each table is created anew under a temporary name (DDL as of version
    3), its rows are copied with ``repeat = 0``, the old table is dropped and the new one renamed."""
    v3 = MetaData()
    Table("outputs", v3, Column("id", Integer, primary_key=True))  # referenced only, exists already
    tables = {
        "metric_values": Table(
            "metric_values_v3",
            v3,
            Column("output_id", Integer, ForeignKey("outputs.id", ondelete="CASCADE"), primary_key=True),
            Column("metric", Text, primary_key=True),
            Column("repeat", Integer, primary_key=True, server_default="0"),
            Column("value", Float),
            Column("unscored_reason", Text),
            Column("details_json", Text),
            Column("metric_key", String(64)),
            *_v3_usage_columns(),
        ),
        "judgements": Table(
            "judgements_v3",
            v3,
            Column("output_id", Integer, ForeignKey("outputs.id", ondelete="CASCADE"), primary_key=True),
            Column("judge", Text, primary_key=True),
            Column("repeat", Integer, primary_key=True, server_default="0"),
            Column("verdict", Text, nullable=False),
            Column("score", Float),
            Column("explanation", Text),
            Column("judge_id", Text),
            Column("details_json", Text),
            Column("judge_key", String(64)),
            *_v3_usage_columns(),
        ),
    }
    for name, table in tables.items():
        table.create(conn)
        columns = ", ".join(c.name for c in table.columns if c.name != "repeat")
        conn.execute(text(f"INSERT INTO {table.name} ({columns}, repeat) SELECT {columns}, 0 FROM {name}"))
        conn.execute(text(f"DROP TABLE {name}"))
        conn.execute(text(f"ALTER TABLE {table.name} RENAME TO {name}"))


_V4_OUTPUTS_PER_STEP = 500  # outputs read, packed and rewritten at a time by the v4 migration


def _v4_context_texts(conn: Connection) -> None:
    """Version 4: the ``context_texts`` table (DDL as of version 4), and every output's inline context texts
    moved into it (``output_json`` keeps their keys, see :mod:`ragassay.store.contexts`).

    Inside the caller's transaction (an interrupted migration leaves version 3 as it was) and idempotent: an
    output already packed is left alone, a text already stored is not inserted again."""
    from .contexts import repack, store_texts

    texts_table = Table(
        "context_texts",
        MetaData(),
        Column("key", String(32), primary_key=True),
        Column("text", Text, nullable=False),
    )
    texts_table.create(conn, checkfirst=True)
    after = -1
    while True:
        rows = conn.execute(
            text(
                "SELECT id, output_json FROM outputs WHERE id > :after AND output_json IS NOT NULL ORDER BY id LIMIT :n"
            ),
            {"after": after, "n": _V4_OUTPUTS_PER_STEP},
        ).all()
        if not rows:
            return
        texts: dict[str, str] = {}
        packed = [{"id": row.id, "raw": raw} for row in rows if (raw := repack(row.output_json, texts)) is not None]
        store_texts(conn, texts, texts_table)
        if packed:
            conn.execute(text("UPDATE outputs SET output_json = :raw WHERE id = :id"), packed)
        after = rows[-1].id


def _traces_tables(conn: Connection) -> None:
    """Ingested traces (DDL as released): ``trace_spans``, one row per span keyed by trace and span id, and
    ``trace_resources``, each distinct resource once. New tables only: nothing else changes."""
    tables = MetaData()
    Table(
        "trace_spans",
        tables,
        Column("trace_id", String(32), primary_key=True),
        Column("span_id", String(16), primary_key=True),
        Column("parent_span_id", String(16)),
        Column("start_ns", BigInteger, nullable=False),
        Column("resource_key", String(32), nullable=False),
        Column("span_json", Text, nullable=False),
        Column("received_at", Float, nullable=False),
    )
    Table(
        "trace_resources",
        tables,
        Column("key", String(32), primary_key=True),
        Column("attributes_json", Text, nullable=False),
    )
    tables.create_all(conn, checkfirst=True)


def _v6_labels(conn: Connection) -> None:
    """Version 6: the ``labels`` table (DDL as of version 6): human labels on a run's items."""
    v6 = MetaData()
    Table("runs", v6, Column("id", String(64), primary_key=True))  # referenced only, exists already
    labels = Table(
        "labels",
        v6,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        Column("sample_id", Text, nullable=False),
        Column("system", Text),
        Column("systems_json", Text),
        Column("item_key", Text, nullable=False),
        Column("rubric", Text, nullable=False),
        Column("rubric_version", Integer, nullable=False),
        Column("annotator", Text, nullable=False),
        Column("value", Float, nullable=False),
        Column("labelled_at", Float, nullable=False),
        Column("undone_at", Float),
    )
    Index("ix_labels_run_rubric", labels.c.run_id, labels.c.rubric, labels.c.annotator)
    labels.create(conn, checkfirst=True)  # idempotent, as every migration


def _v7_reasoning_tokens(conn: Connection) -> None:
    """Version 7: ``reasoning_tokens`` (0 for the rows stored before) on outputs, metric values and judgements."""
    for table in ("outputs", "metric_values", "judgements"):
        if "reasoning_tokens" not in {c["name"] for c in inspect(conn).get_columns(table)}:  # idempotent
            conn.execute(text(f"ALTER TABLE {table} ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0"))


_V8_LABELS_PER_STEP = 500  # labels read and given their digest at a time by the v8 migration


def _v8_label_digests(conn: Connection) -> None:
    """Version 8: ``labels.output_digest`` and ``labels.probability``; every stored label gets the digest of the
    answer(s) it was given on, read from its run's outputs (a label whose answer is gone keeps NULL: it is then
    reused on no other run). Inside the caller's transaction; no row is removed or changed otherwise."""
    from ..labels.digest import answers_digest, item_systems

    columns = {c["name"] for c in inspect(conn).get_columns("labels")}
    for column in ("output_digest VARCHAR(32)", "probability FLOAT"):
        if column.split()[0] not in columns:
            conn.execute(text(f"ALTER TABLE labels ADD COLUMN {column}"))
    after = -1
    while True:
        rows = conn.execute(
            text(
                "SELECT id, run_id, sample_id, system, systems_json FROM labels WHERE id > :after AND "
                "output_digest IS NULL ORDER BY id LIMIT :n"
            ),
            {"after": after, "n": _V8_LABELS_PER_STEP},
        ).all()
        if not rows:
            return
        answers = _v8_answers(conn, rows)
        filled = []
        for row in rows:
            names = item_systems(row.system, json.loads(row.systems_json) if row.systems_json else None)
            found = [answers.get((row.run_id, row.sample_id, name)) for name in names]
            if all(answer is not None for answer in found):
                filled.append({"id": row.id, "digest": answers_digest(found)})
        if filled:
            conn.execute(text("UPDATE labels SET output_digest = :digest WHERE id = :id"), filled)
        after = rows[-1].id


def _v8_answers(conn: Connection, rows: list) -> dict[tuple[str, str, str], str]:
    """(run, sample, system) -> the ok answer, for the samples of the labels in ``rows``."""
    found: dict[tuple[str, str, str], str] = {}
    for run_id, sample_id in sorted({(row.run_id, row.sample_id) for row in rows}):
        answered = conn.execute(
            text("SELECT system, answer FROM outputs WHERE run_id = :run AND question_id = :sample AND status = 'ok'"),
            {"run": run_id, "sample": sample_id},
        )
        found.update({(run_id, sample_id, system): answer for system, answer in answered if answer is not None})
    return found


def _v9_watch(conn: Connection) -> None:
    """Version 9: ``watch_traces`` and ``watch_state`` (DDL as of version 9), and an index on
    ``trace_spans.received_at`` (a watch looks for the traces that came since it last looked). New tables only."""
    v9 = MetaData()
    Table("runs", v9, Column("id", String(64), primary_key=True))  # referenced only, exists already
    traces = Table(
        "watch_traces",
        v9,
        Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        Column("trace_id", String(32), primary_key=True),
        Column("position", Integer, nullable=False),
        Column("status", String(16), nullable=False),
        Column("reason", Text),
        Column("started_at", Float),
        Column("decided_at", Float, nullable=False),
    )
    state = Table(
        "watch_state",
        v9,
        Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        Column("state_json", Text, nullable=False),
        Column("updated_at", Float, nullable=False),
    )
    spans = Table("trace_spans", v9, Column("received_at", Float, nullable=False))  # exists already
    Index("ix_watch_traces_position", traces.c.run_id, traces.c.position)
    received = Index("ix_trace_spans_received", spans.c.received_at)
    traces.create(conn, checkfirst=True)
    state.create(conn, checkfirst=True)
    if "ix_trace_spans_received" not in {i["name"] for i in inspect(conn).get_indexes("trace_spans")}:
        received.create(conn)


def _v10_span_cursor(conn: Connection) -> None:
    """Version 10: the index a watch's cursor pages through new spans by, ``(received_at, trace_id, span_id,
    parent_span_id)`` (:mod:`ragassay.store.watch`), in place of the index on ``received_at`` alone (its prefix).
    Indexes only."""
    v10 = MetaData()
    spans = Table(
        "trace_spans",
        v10,
        Column("trace_id", String(32)),
        Column("span_id", String(16)),
        Column("parent_span_id", String(16)),
        Column("received_at", Float),
    )  # exists already
    cursor = Index(
        "ix_trace_spans_cursor", spans.c.received_at, spans.c.trace_id, spans.c.span_id, spans.c.parent_span_id
    )
    names = {i["name"] for i in inspect(conn).get_indexes("trace_spans")}
    if "ix_trace_spans_cursor" not in names:
        cursor.create(conn)
    if "ix_trace_spans_received" in names:
        Index("ix_trace_spans_received", spans.c.received_at).drop(conn)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


#: (version, description, function) in order.
MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "initial schema", _v1_initial),
    (2, "columns for what readers re-parsed, reuse keys, details, evaluation cost, run leases", _v2_columns_and_keys),
    (3, "repeat in the primary key of metric_values and judgements (run --repeat N)", _v3_repeat_in_key),
    (4, "context texts stored once per store, outputs name them by key", _v4_context_texts),
    (5, "ingested traces: spans and resources", _traces_tables),
    (6, "labels: human labels on a run's items (ragassay label)", _v6_labels),
    (7, "reasoning tokens of outputs, metric values and judgements, kept apart for pricing", _v7_reasoning_tokens),
    (8, "labels: the digest of the answer(s) labelled, an active queue's labelling probability", _v8_label_digests),
    (9, "ragassay watch: the traces it decided on and its progress", _v9_watch),
    (10, "the index a watch's cursor pages through new spans by", _v10_span_cursor),
]


def current_version(conn: Connection) -> int:
    """The database's schema version (0 for an empty database)."""
    if not inspect(conn).has_table("schema_version"):
        return 0
    row = conn.execute(schema_version.select()).first()
    return int(row.version) if row else 0


def migrate(conn: Connection, target: int) -> list[int]:
    """Apply the migrations above the current version up to ``target``; returns the versions applied."""
    applied, current = [], current_version(conn)
    for version, _description, function in MIGRATIONS:
        if version <= current or version > target:
            continue
        function(conn)
        conn.execute(schema_version.delete())
        conn.execute(schema_version.insert().values(version=version))
        applied.append(version)
    return applied
