"""Spans between :mod:`ragassay.traces` and a results store that keeps traces
(:class:`~ragassay.store.protocols.TraceStore`; the SQL is :mod:`ragassay.store.traces`): decoded spans become
rows to store, and the rows a store gives back (a trace's spans together, in trace-id order) become traces again."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import StoreError
from ..store.protocols import SpanRow, TraceStore
from .model import TraceSpan
from .otlp import LOG_RECORD, StoredSpan


def trace_store(store: Any) -> TraceStore:
    """``store``, when it keeps traces; else a :class:`StoreError` saying so."""
    if not isinstance(store, TraceStore):
        raise StoreError(
            f"this results store ({type(store).__name__}) keeps no traces: its backend does not implement "
            "ragassay.store.protocols.TraceStore; use a SQLite or PostgreSQL one"
        )
    return store


def span_rows(spans: Iterable[StoredSpan]) -> list[SpanRow]:
    """The rows that store ``spans`` (a resource dict shared by spans stays shared: the store keys it once)."""
    return [
        SpanRow(
            stored.trace_id,
            stored.span.span_id,
            stored.span.parent_span_id,
            stored.span.start_ns,
            stored.resource,
            stored.span.model_dump_json(exclude_defaults=True),
        )
        for stored in spans
    ]


def grouped(rows: Iterable[tuple[str, str, dict, str]]) -> Iterator[tuple[str, list[TraceSpan], dict]]:
    """Stored rows (trace id, span id, resource attributes, span JSON), ordered by trace id, as (trace id, spans,
    resource attributes by span id) per trace; the log records received for a span become its events
    (:func:`fold_log_records`)."""
    current, spans, by_span = None, [], {}
    for trace_id, span_id, resource, span_json in rows:
        if trace_id != current:
            if current is not None:
                yield current, fold_log_records(spans), by_span
            current, spans, by_span = trace_id, [], {}
        span = TraceSpan.model_validate_json(span_json)
        spans.append(span)
        if span.otel_kind != LOG_RECORD:
            by_span[span_id] = resource
    if current is not None:
        yield current, fold_log_records(spans), by_span


def fold_log_records(spans: list[TraceSpan]) -> list[TraceSpan]:
    """The trace's spans, each with the events of the log records received for it (GenAI events sent as OTLP log
    records, :data:`~ragassay.traces.otlp.LOG_RECORD`) among its own events, in time order; a record whose span
    has not arrived is left out."""
    records = [span for span in spans if span.otel_kind == LOG_RECORD]
    if not records:
        return spans
    kept = [span for span in spans if span.otel_kind != LOG_RECORD]
    by_id = {span.span_id: span for span in kept}
    for record in records:
        target = by_id.get(record.parent_span_id or "")
        if target is not None:
            target.events = sorted([*target.events, *record.events], key=lambda event: event.time_ns)
    return kept


def iter_stored(store: Any, trace_ids: Iterable[str] | None = None) -> Iterator[tuple[str, list[TraceSpan], dict]]:
    """(trace id, spans by start time, resource attributes of each span by span id) per stored trace, in
    trace-id order; ``trace_ids``: only these."""
    wanted = None if trace_ids is None else sorted(set(trace_ids))
    yield from grouped(trace_store(store).read_spans(wanted))


def fetch_traces(store: Any, trace_ids: Iterable[str]) -> dict[str, tuple[list[TraceSpan], dict]]:
    """Trace id -> (spans by start time, resource attributes by span id) of the stored traces among
    ``trace_ids`` (read in bulk)."""
    return {trace_id: (spans, by_span) for trace_id, spans, by_span in iter_stored(store, trace_ids)}
