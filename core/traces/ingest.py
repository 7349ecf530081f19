"""Storing OTLP traces: ``ragassay traces import`` (files and folders) and the receiver (one request at a time).

A whole import is all or nothing: a malformed file stops it with an error naming the file and line, and nothing
of that import is stored. Spans are staged in batches as they are decoded, so memory stays flat, and switched
into the store at the end in one short transaction, so other writers of the store (the receiver, ``ragassay
label``, a run) wait for that switch alone (:meth:`ragassay.store.traces.TraceTables.write_spans`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .otlp import log_events_of, read_file, spans_of, trace_files
from .storage import span_rows, trace_store

BATCH_SPANS = 2_000  # spans decoded before they are written


@dataclasses.dataclass
class IngestReport:
    """What an import or a received request stored."""

    files: int = 0
    requests: int = 0
    spans_read: int = 0
    spans_new: int = 0
    traces_before: int = 0
    traces_after: int = 0
    spans_total: int = 0
    #: Ids of the traces the imported spans belong to (new or already stored).
    trace_ids: set[str] = dataclasses.field(default_factory=set, repr=False)

    @property
    def traces_new(self) -> int:
        return self.traces_after - self.traces_before

    @property
    def spans_known(self) -> int:
        """Spans read that were stored already (same trace and span id)."""
        return self.spans_read - self.spans_new

    def as_dict(self) -> dict[str, int]:
        return {
            "files": self.files,
            "requests": self.requests,
            "spans_read": self.spans_read,
            "spans_new": self.spans_new,
            "spans_already_stored": self.spans_known,
            "traces_new": self.traces_new,
            "traces_stored": self.traces_after,
            "spans_stored": self.spans_total,
        }


def import_paths(store: Any, paths: list[Path], progress: Callable[[IngestReport], None] | None = None) -> IngestReport:
    """Store every span of the trace files under ``paths``, all or none; returns the counts."""
    files = [f for path in paths for f in trace_files(Path(path))]
    report = IngestReport()

    def batches() -> Iterator[list]:
        batch: list = []
        for file in files:
            report.files += 1
            for where, request in read_file(file):
                report.requests += 1
                spans = spans_of(request, where)
                report.spans_read += len(spans)
                report.trace_ids.update(stored.trace_id for stored in spans)
                batch += spans
                if len(batch) >= BATCH_SPANS:
                    yield span_rows(batch)
                    batch = []
                    if progress is not None:
                        progress(report)
        yield span_rows(batch)

    counted = trace_store(store).write_spans(batches(), counts=True)
    report.traces_before, spans_before, report.traces_after, report.spans_total = counted
    report.spans_new = report.spans_total - spans_before
    return report


def store_request(store: Any, request: Any, where: str, *, wait_s: float | None = None) -> int:
    """Store one decoded ``ExportTraceServiceRequest`` (validated whole first: a bad span stores nothing);
    returns the number of spans it held. ``wait_s``: the longest wait for another writer of the store (then a
    transient error: :func:`ragassay.store.healing.diagnose`)."""
    spans = spans_of(request, where)
    if spans:
        trace_store(store).write_spans([span_rows(spans)], wait_s=wait_s)
    return len(spans)


def store_log_request(store: Any, request: Any, where: str, *, wait_s: float | None = None) -> tuple[int, int]:
    """Store the log records of one decoded ``ExportLogsServiceRequest`` that belong to a span (validated whole
    first); returns (records kept, records without a trace and span id, not kept). ``wait_s``: as for
    :func:`store_request`."""
    records, unattached = log_events_of(request, where)
    if records:
        trace_store(store).write_spans([span_rows(records)], wait_s=wait_s)
    return len(records), unattached
