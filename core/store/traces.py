"""Traces in the results store (schema version 5), mixed into :class:`~ragassay.store.ResultsStore` (the
:class:`~ragassay.store.protocols.TraceStore` protocol): one row per span in ``trace_spans`` keyed by (trace id,
span id), so storing a span again changes nothing (import is idempotent, a receiver may get a trace's spans in
several requests); each distinct resource once in ``trace_resources``. Reads give the spans of a trace together,
streamed in trace-id order, so memory stays flat whatever the number of traces. Decoding the spans, mapping and
selecting traces is :mod:`ragassay.traces`' work.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import func, select

from . import schema as t
from .healing import healing_stream
from .protocols import SpanRow

SPANS_PER_STATEMENT = 500  # rows per INSERT
RESOURCE_CACHE = 4_096  # distinct resources kept decoded while reading
IDS_PER_QUERY = 500  # trace ids per bulk read
_STREAM = 2_000  # span rows fetched at a time by a streamed read


def resource_key(attributes_json: str) -> str:
    """The key of a resource: 32 hex characters of the sha256 of its canonical JSON."""
    return hashlib.sha256(attributes_json.encode("utf-8")).hexdigest()[:32]


class TraceTables:
    """Writing and reading spans (needs ``self.engine`` and ``self.healer``)."""

    engine: Any
    _span_resources: _Resources | None = None

    def write_spans(self, batches: Iterable[Sequence[SpanRow]], *, counts: bool = False) -> tuple | None:
        """Store the spans of ``batches`` not stored yet (and their resources) in one transaction; a span already
        stored is left as it is (``ON CONFLICT DO NOTHING``). With ``counts``: (traces before, spans before,
        traces after, spans after), counted in the same transaction.

        Not retried: ``batches`` is read once (an import decodes its files while it writes them)."""
        with self.engine.begin() as conn:
            before = _counts(conn) if counts else None
            for batch in batches:
                _insert_spans(conn, batch)
            return (*before, *_counts(conn)) if counts else None

    @healing_stream
    def read_spans(self, trace_ids: Sequence[str] | None = None) -> Iterator[tuple[str, str, dict[str, Any], str]]:
        """(trace id, span id, resource attributes, span JSON) per stored span, ordered by trace id, start and span
        id; ``trace_ids``: only these (one statement per :data:`IDS_PER_QUERY` ids)."""
        c = t.trace_spans.c
        query = select(c.trace_id, c.span_id, c.resource_key, c.span_json).order_by(c.trace_id, c.start_ns, c.span_id)
        if trace_ids is None:
            queries = [query]
        else:
            wanted = sorted(set(trace_ids))
            parts = range(0, len(wanted), IDS_PER_QUERY)
            queries = [query.where(c.trace_id.in_(wanted[i : i + IDS_PER_QUERY])) for i in parts]
        resources = self._trace_resources()
        with self.engine.connect() as conn, self.engine.connect() as side:  # side: resources, while rows stream
            for each in queries:
                for trace_id, span_id, key, span_json in conn.execution_options(yield_per=_STREAM).execute(each):
                    yield trace_id, span_id, resources(side, key), span_json

    def _trace_resources(self) -> _Resources:
        """The store's cache of decoded resources (they never change: a key is its content's hash)."""
        if self._span_resources is None:
            self._span_resources = _Resources()
        return self._span_resources


class _Resources:
    """Decoded resources by key, read on first use (a bounded cache)."""

    def __init__(self) -> None:
        self.cache: dict[str, dict[str, Any]] = {}

    def __call__(self, conn: Any, key: str) -> dict[str, Any]:
        found = self.cache.get(key)
        if found is None:
            c = t.trace_resources.c
            raw = conn.execute(select(c.attributes_json).where(c.key == key)).scalar()
            found = json.loads(raw) if raw else {}
            if len(self.cache) >= RESOURCE_CACHE:
                self.cache.clear()
            self.cache[key] = found
        return found


def _counts(conn: Any) -> tuple[int, int]:
    """(traces, spans) stored."""
    c = t.trace_spans.c
    row = conn.execute(select(func.count(func.distinct(c.trace_id)), func.count())).one()
    return int(row[0]), int(row[1])


def _insert(conn: Any):
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


def _insert_spans(conn: Any, spans: Sequence[SpanRow]) -> None:
    """Insert spans (and their resources) not stored yet, in the caller's transaction."""
    insert = _insert(conn)
    resources: dict[str, str] = {}
    keys: dict[int, tuple[dict, str]] = {}  # id of a resource dict -> (it, kept alive, its key): shared by a request
    rows = []
    now = time.time()
    for span in spans:
        resource = span[4]
        known = keys.get(id(resource))
        if known is None:
            attributes_json = json.dumps(resource, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            known = keys[id(resource)] = resource, resource_key(attributes_json)
            resources[known[1]] = attributes_json
        rows.append(
            {
                "trace_id": span[0],
                "span_id": span[1],
                "parent_span_id": span[2],
                "start_ns": span[3],
                "resource_key": known[1],
                "span_json": span[5],
                "received_at": now,
            }
        )
    if resources:
        statement = insert(t.trace_resources).on_conflict_do_nothing(index_elements=["key"])
        conn.execute(statement, [{"key": k, "attributes_json": v} for k, v in sorted(resources.items())])
    statement = insert(t.trace_spans).on_conflict_do_nothing(index_elements=["trace_id", "span_id"])
    for start in range(0, len(rows), SPANS_PER_STATEMENT):
        conn.execute(statement, rows[start : start + SPANS_PER_STATEMENT])
