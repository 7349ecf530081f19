"""Traces in the results store (schema version 5): one row per span in ``trace_spans`` keyed by (trace id, span
id), so storing a span again changes nothing (import is idempotent, a receiver may get a trace's spans in several
requests); each distinct resource once in ``trace_resources``. Reads group the spans of a trace back together,
streamed in trace-id order, so memory stays flat whatever the number of traces."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import bindparam, func, select

from ..errors import StoreError
from ..store import schema as t
from .model import TraceSpan
from .otlp import StoredSpan

SPANS_PER_STATEMENT = 500  # rows per INSERT
RESOURCE_CACHE = 4_096  # distinct resources kept decoded while reading
IDS_PER_QUERY = 500  # trace ids per bulk read


def _insert(conn: Any):
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


def resource_key(attributes_json: str) -> str:
    """The key of a resource: 32 hex characters of the sha256 of its canonical JSON."""
    return hashlib.sha256(attributes_json.encode("utf-8")).hexdigest()[:32]


def _engine(store: Any):
    engine = getattr(store, "engine", None)
    if engine is None:
        raise StoreError("this results store keeps no traces (it has no SQL database); use a SQLite or PostgreSQL one")
    return engine


def counts(conn: Any) -> tuple[int, int]:
    """(traces, spans) stored."""
    c = t.trace_spans.c
    row = conn.execute(select(func.count(func.distinct(c.trace_id)), func.count())).one()
    return int(row[0]), int(row[1])


def write_spans(conn: Any, spans: Iterable[StoredSpan]) -> None:
    """Insert spans (and their resources) not stored yet, in the caller's transaction; a span already stored is
    left as it is (``ON CONFLICT DO NOTHING``)."""
    insert = _insert(conn)
    resources: dict[str, str] = {}
    keys: dict[int, tuple[dict, str]] = {}  # id of a resource dict -> (it, kept alive, its key): shared by a request
    rows = []
    now = time.time()
    for stored in spans:
        known = keys.get(id(stored.resource))
        if known is None:
            attributes_json = json.dumps(stored.resource, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            known = keys[id(stored.resource)] = stored.resource, resource_key(attributes_json)
            resources[known[1]] = attributes_json
        key = known[1]
        span = stored.span
        rows.append(
            {
                "trace_id": stored.trace_id,
                "span_id": span.span_id,
                "parent_span_id": span.parent_span_id,
                "start_ns": span.start_ns,
                "resource_key": key,
                "span_json": span.model_dump_json(exclude_defaults=True),
                "received_at": now,
            }
        )
    if resources:
        statement = insert(t.trace_resources).on_conflict_do_nothing(index_elements=["key"])
        conn.execute(statement, [{"key": k, "attributes_json": v} for k, v in sorted(resources.items())])
    statement = insert(t.trace_spans).on_conflict_do_nothing(index_elements=["trace_id", "span_id"])
    for start in range(0, len(rows), SPANS_PER_STATEMENT):
        conn.execute(statement, rows[start : start + SPANS_PER_STATEMENT])


class _Resources:
    """Decoded resources by key, read on first use (a bounded cache)."""

    def __init__(self, conn: Any):
        self.conn = conn
        self.cache: dict[str, dict[str, Any]] = {}

    def __call__(self, key: str) -> dict[str, Any]:
        found = self.cache.get(key)
        if found is None:
            c = t.trace_resources.c
            raw = self.conn.execute(select(c.attributes_json).where(c.key == key)).scalar()
            found = json.loads(raw) if raw else {}
            if len(self.cache) >= RESOURCE_CACHE:
                self.cache.clear()
            self.cache[key] = found
        return found


def _grouped(rows: Iterable[Any], resources: _Resources) -> Iterator[tuple[str, list[TraceSpan], dict]]:
    """Rows ordered by trace id grouped into (trace id, spans, resource attributes by span id)."""
    current, spans, by_span = None, [], {}
    for row in rows:
        if row.trace_id != current:
            if current is not None:
                yield current, spans, by_span
            current, spans, by_span = row.trace_id, [], {}
        spans.append(TraceSpan.model_validate_json(row.span_json))
        by_span[row.span_id] = resources(row.resource_key)
    if current is not None:
        yield current, spans, by_span


def _spans_query():
    c = t.trace_spans.c
    return select(c.trace_id, c.span_id, c.resource_key, c.span_json)


def iter_stored(store: Any, trace_ids: Iterable[str] | None = None) -> Iterator[tuple[str, list[TraceSpan], dict]]:
    """(trace id, spans by start time, resource attributes of each span by span id) per stored trace, in
    trace-id order; ``trace_ids``: only these."""
    c = t.trace_spans.c
    query = _spans_query()
    if trace_ids is not None:
        query = query.where(c.trace_id.in_(sorted(set(trace_ids))))
    query = query.order_by(c.trace_id, c.start_ns, c.span_id)
    with _engine(store).connect() as conn:
        resources = _Resources(_engine(store).connect())
        try:
            rows = conn.execution_options(stream_results=True, yield_per=2_000).execute(query)
            yield from _grouped(rows, resources)
        finally:
            resources.conn.close()


class StoredTraces:
    """Stored traces read by id in bulk on one connection kept open (resources decoded once, a bounded cache):
    for a reader that needs many traces in no particular order, such as a replay. Close it after use."""

    def __init__(self, store: Any):
        self.engine = _engine(store)
        self.conn: Any = None
        self.resources: _Resources | None = None
        c = t.trace_spans.c
        self.query = (
            _spans_query()
            .where(c.trace_id.in_(bindparam("ids", expanding=True)))
            .order_by(c.trace_id, c.start_ns, c.span_id)
        )

    def fetch(self, trace_ids: Iterable[str]) -> dict[str, tuple[list[TraceSpan], dict]]:
        """Trace id -> (spans by start time, resource attributes by span id) of those stored; one query per
        :data:`IDS_PER_QUERY` ids."""
        if self.conn is None:  # opened on first use, in the thread that reads
            self.conn = self.engine.connect()
            self.resources = _Resources(self.conn)
        wanted = sorted(set(trace_ids))
        found: dict[str, tuple[list[TraceSpan], dict]] = {}
        for start in range(0, len(wanted), IDS_PER_QUERY):
            rows = self.conn.execute(self.query, {"ids": wanted[start : start + IDS_PER_QUERY]}).all()
            for trace_id, spans, by_span in _grouped(rows, self.resources):
                found[trace_id] = spans, by_span
        self.conn.rollback()  # hold no transaction between reads (PostgreSQL: not idle in transaction)
        return found

    def close(self) -> None:
        """Release the connection."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None
