"""Traces in the results store (schema version 5), mixed into :class:`~ragassay.store.ResultsStore` (the
:class:`~ragassay.store.protocols.TraceStore` protocol): one row per span in ``trace_spans`` keyed by (trace id,
span id), so storing a span again changes nothing (import is idempotent, a receiver may get a trace's spans in
several requests); each distinct resource once in ``trace_resources``. Reads give the spans of a trace together,
streamed in trace-id order, so memory stays flat whatever the number of traces. Decoding the spans, mapping and
selecting traces is :mod:`ragassay.traces`' work.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import Column, Float, MetaData, Table, func, literal, select, text, true

from . import schema as t
from .healing import SQLITE_BUSY_TIMEOUT_MS, healing_stream
from .protocols import SpanRow

SPANS_PER_STATEMENT = 500  # rows per INSERT
RESOURCE_CACHE = 4_096  # distinct resources kept decoded while reading
IDS_PER_QUERY = 500  # trace ids per bulk read
_STREAM = 2_000  # span rows fetched at a time by a streamed read
#: PostgreSQL advisory lock key of span writers ("spans"): they take turns, so ``received_at`` follows commit order.
SPANS_LOCK_KEY = 0x7370_616E_73


def resource_key(attributes_json: str) -> str:
    """The key of a resource: 32 hex characters of the sha256 of its canonical JSON."""
    return hashlib.sha256(attributes_json.encode("utf-8")).hexdigest()[:32]


class TraceTables:
    """Writing and reading spans (needs ``self.engine`` and ``self.healer``)."""

    engine: Any
    _span_resources: _Resources | None = None

    def write_spans(
        self, batches: Iterable[Sequence[SpanRow]], *, counts: bool = False, wait_s: float | None = None
    ) -> tuple | None:
        """Store the spans of ``batches`` not stored yet (and their resources), all or none; a span already
        stored is left as it is (``ON CONFLICT DO NOTHING``). With ``counts``: (traces before, spans before,
        traces after, spans after): what this call added is counted exactly, the totals after it.

        A list (a received request, in memory already) is inserted in one short transaction; ``wait_s`` bounds
        how long it waits for another writer's lock (then a transient "locked" error, which the receiver answers
        with 503). Anything else (an import decoding its files while it writes) is staged, then switched in:
        each batch goes into temporary tables of one connection in a short transaction of its own (no other
        writer waits for them, and memory stays flat), then one transaction copies the staged rows into the store
        inside the database, so other writers wait for that copy alone, never for the decoding. A batch that
        fails to come (a malformed file) stops the import before the switch: nothing of it is stored. Not
        retried: ``batches`` is read once.
        """
        if isinstance(batches, list):
            with self.engine.begin() as conn, _lock_wait(conn, wait_s):
                new = _insert_spans(conn, [span for batch in batches for span in batch], counts=counts)
        else:
            new = _staged(self.engine, batches, counts=counts)
        if not counts:
            return None
        with self.engine.connect() as conn:
            traces, spans = _counts(conn)
        return traces - new[0], spans - new[1], traces, spans

    def traces_location(self) -> str:
        """Which database this store's traces are in (a digest of its URL): two stores with the same location
        read the same traces."""
        url = self.engine.url.render_as_string(hide_password=False)
        return hashlib.sha256(url.encode("utf-8")).hexdigest()

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


@contextlib.contextmanager
def _lock_wait(conn: Any, wait_s: float | None) -> Iterator[None]:
    """Within the caller's transaction, wait at most ``wait_s`` for another writer's lock (None: the store's
    usual wait): SQLite's busy timeout (set back afterwards: connections are pooled), PostgreSQL's
    ``lock_timeout`` (for this transaction only)."""
    if wait_s is None:
        yield
        return
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = {max(1, int(wait_s * 1000))}")
        yield
        return
    conn.exec_driver_sql(f"PRAGMA busy_timeout = {max(1, int(wait_s * 1000))}")
    try:
        yield
    finally:
        conn.exec_driver_sql(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")


def _span_rows(spans: Sequence[SpanRow], now: float) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The ``trace_spans`` rows of ``spans`` and their resources (key -> attributes JSON)."""
    resources: dict[str, str] = {}
    keys: dict[int, tuple[dict, str]] = {}  # id of a resource dict -> (it, kept alive, its key): shared by a request
    rows = []
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
    return rows, resources


def _lock_spans(conn: Any) -> None:
    """PostgreSQL: take the span writers' advisory lock for the transaction (SQLite: its first write takes the
    database's write lock); see :func:`_stamp`."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SPANS_LOCK_KEY})


def _stamp(conn: Any) -> float:
    """The ``received_at`` of the spans a transaction stores, taken under the writers' lock (after
    :func:`_lock_spans` and a first write): now, but always after every stored span's (a clock set back changes
    nothing). So a transaction that commits later has a later stamp, and a reader that saw the spans up to a stamp
    has seen every span that will ever be stored with that stamp or before: the watch's cursor
    (:meth:`ragassay.store.watch.WatchTables.watch_spans_after`) never skips one."""
    latest = conn.execute(select(func.max(t.trace_spans.c.received_at))).scalar()
    now = time.time()
    return now if latest is None or now > latest else math.nextafter(float(latest), math.inf)


def _insert_spans(conn: Any, spans: Sequence[SpanRow], *, counts: bool) -> tuple[int, int]:
    """Insert spans (and their resources) not stored yet, in the caller's transaction; (new traces, new spans)
    when ``counts``, else (0, 0)."""
    insert = _insert(conn)
    rows, resources = _span_rows(spans, 0.0)
    _lock_spans(conn)
    if resources:
        statement = insert(t.trace_resources).on_conflict_do_nothing(index_elements=["key"])
        conn.execute(statement, [{"key": k, "attributes_json": v} for k, v in sorted(resources.items())])
    stamp = _stamp(conn)
    for row in rows:
        row["received_at"] = stamp
    trace_ids = sorted({row["trace_id"] for row in rows})
    before = _spans_of(conn, trace_ids) if counts else (0, 0)
    statement = insert(t.trace_spans).on_conflict_do_nothing(index_elements=["trace_id", "span_id"])
    for start in range(0, len(rows), SPANS_PER_STATEMENT):
        conn.execute(statement, rows[start : start + SPANS_PER_STATEMENT])
    if not counts:
        return 0, 0
    after = _spans_of(conn, trace_ids)
    return after[0] - before[0], after[1] - before[1]


def _spans_of(conn: Any, trace_ids: Sequence[str]) -> tuple[int, int]:
    """(traces, spans) stored of ``trace_ids``."""
    c = t.trace_spans.c
    traces = spans = 0
    for start in range(0, len(trace_ids), IDS_PER_QUERY):
        chunk = trace_ids[start : start + IDS_PER_QUERY]
        found = conn.execute(select(func.count(func.distinct(c.trace_id)), func.count()).where(c.trace_id.in_(chunk)))
        row = found.one()
        traces, spans = traces + row[0], spans + row[1]
    return traces, spans


# -- staging an import -----------------------------------------------------------------------------------------

_staging = MetaData()
_STAGED_SPANS = Table(
    "ragassay_staged_spans",
    _staging,
    *(Column(c.name, c.type, primary_key=c.primary_key) for c in t.trace_spans.columns),
    prefixes=["TEMPORARY"],
)
_STAGED_RESOURCES = Table(
    "ragassay_staged_resources",
    _staging,
    *(Column(c.name, c.type, primary_key=c.primary_key) for c in t.trace_resources.columns),
    prefixes=["TEMPORARY"],
)


def _staged(engine: Any, batches: Iterable[Sequence[SpanRow]], *, counts: bool) -> tuple[int, int]:
    """Stage ``batches`` in temporary tables of one connection, then switch them in (see
    :meth:`TraceTables.write_spans`); (new traces, new spans)."""
    with engine.connect() as conn:
        with conn.begin():
            for table in (_STAGED_SPANS, _STAGED_RESOURCES):
                table.create(conn, checkfirst=True)
        try:
            for batch in batches:
                with conn.begin():
                    _stage_spans(conn, batch)
            with conn.begin():
                return _switch_spans(conn, counts=counts)
        finally:
            if not conn.invalidated:
                if conn.in_transaction():
                    conn.rollback()
                with conn.begin():
                    for table in (_STAGED_SPANS, _STAGED_RESOURCES):
                        table.drop(conn, checkfirst=True)


def _stage_spans(conn: Any, spans: Sequence[SpanRow]) -> None:
    """Add spans (and resources) to the staging tables; a span staged twice is kept once (the first)."""
    insert = _insert(conn)
    rows, resources = _span_rows(spans, time.time())
    if resources:
        statement = insert(_STAGED_RESOURCES).on_conflict_do_nothing(index_elements=["key"])
        conn.execute(statement, [{"key": k, "attributes_json": v} for k, v in sorted(resources.items())])
    statement = insert(_STAGED_SPANS).on_conflict_do_nothing(index_elements=["trace_id", "span_id"])
    for start in range(0, len(rows), SPANS_PER_STATEMENT):
        conn.execute(statement, rows[start : start + SPANS_PER_STATEMENT])


def _switch_spans(conn: Any, *, counts: bool) -> tuple[int, int]:
    """Copy the staged resources and spans into the store in the caller's transaction (resources first: the
    write lock is taken before anything is counted); (new traces, new spans)."""
    insert = _insert(conn)
    staged, resources = _STAGED_SPANS.c, _STAGED_RESOURCES.c
    _lock_spans(conn)
    conn.execute(
        insert(t.trace_resources)
        .from_select(["key", "attributes_json"], select(resources.key, resources.attributes_json).where(true()))
        .on_conflict_do_nothing(index_elements=["key"])
    )
    new_traces = 0
    if counts:
        stored = select(t.trace_spans.c.trace_id).where(t.trace_spans.c.trace_id == staged.trace_id).exists()
        ids = select(staged.trace_id).distinct().where(~stored).subquery()
        new_traces = conn.execute(select(func.count()).select_from(ids)).scalar()
    columns = [c.name for c in t.trace_spans.columns]
    stamp = literal(_stamp(conn), Float)  # the spans are received when they are switched in, not when staged
    picked = (stamp.label(n) if n == "received_at" else staged[n] for n in columns)
    copied = conn.execute(
        insert(t.trace_spans)
        .from_select(columns, select(*picked).where(true()).order_by(staged.trace_id, staged.span_id))
        .on_conflict_do_nothing(index_elements=["trace_id", "span_id"])
    )  # in the store's key order: the fastest way into its index
    return new_traces, copied.rowcount
