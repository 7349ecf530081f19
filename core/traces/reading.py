"""The read API: stored traces, mapped, sampled and filtered (``ragassay.traces.read_traces``)."""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .mapping import MappingFailure, TraceMapping, map_own_spans
from .model import Trace, Unmapped
from .select import Filter, parse_sample, sampled
from .storage import fetch_traces, iter_stored

SHOWN_UNMAPPED = 10


def open_traces_store(project_or_store: Any, *, create: bool = False):
    """A results store from a store, a :class:`~ragassay.engine.project.Project`, a config path or folder, or a
    SQLAlchemy URL; returns (store, whether the caller must close it). Opened with
    :func:`ragassay.store.open_store` or :meth:`Project.open_store <ragassay.engine.project.Project.open_store>`."""
    if not isinstance(project_or_store, (str, Path)):
        if hasattr(project_or_store, "open_store"):  # a Project
            return project_or_store.open_store(create=create), True
        return project_or_store, False
    text = str(project_or_store)
    if "://" in text:
        from ..store import open_store

        return open_store(text, create=create), True
    from ..config import load_config
    from ..engine.project import Project

    return Project(load_config(Path(text))).open_store(create=create), True


def scan_traces(
    project_or_store: Any,
    *,
    where: Mapping[str, Any] | None = None,
    sample: str | float | None = None,
    mapping: TraceMapping | None = None,
    trace_ids: list[str] | None = None,
) -> Iterator[Trace | Unmapped]:
    """Every stored trace in trace-id order, mapped (:class:`Trace`) or not (:class:`Unmapped` with the reason);
    ``sample`` and ``where`` applied (an unmappable trace is reported when it is in the sample)."""
    mapping = mapping or TraceMapping()
    fraction = parse_sample(sample)
    keep = Filter(where)
    store, owned = open_traces_store(project_or_store)
    try:
        for trace_id, spans, resources in iter_stored(store, trace_ids):
            if not sampled(trace_id, fraction):
                continue
            trace = _mapped(trace_id, spans, resources, mapping)
            if isinstance(trace, Unmapped) or not keep or keep.matches(trace):
                yield trace
    finally:
        if owned:
            store.close()


def _mapped(trace_id: str, spans: list, resources: dict, mapping: TraceMapping) -> Trace | Unmapped:
    """The trace of spans just read (handed over to the mapping), or why it cannot be mapped."""
    try:
        return map_own_spans(trace_id, spans, resources, mapping)
    except MappingFailure as exc:
        return Unmapped(trace_id=trace_id, reason=str(exc))


_READ: contextvars.ContextVar[tuple[str, TraceMapping, Mapping[str, Any]] | None] = contextvars.ContextVar(
    "ragassay_traces_read", default=None
)


def _store_key(store: Any) -> str | None:
    location = getattr(store, "traces_location", None)
    return None if location is None else location()


@contextlib.contextmanager
def traces_read(store: Any, mapping: TraceMapping, traces: Mapping[str, Trace | Unmapped]) -> Iterator[None]:
    """Within the block (and the tasks it starts), a :class:`TraceLookup` of the same store and mapping takes
    ``traces`` (trace id -> as just read and mapped) instead of reading them again: ``ragassay watch`` scores the
    traces it has just read, and the ``trace_replay`` system looks each up for its answer."""
    key = _store_key(store)
    token = _READ.set(None if key is None else (key, mapping, traces))
    try:
        yield
    finally:
        _READ.reset(token)


def _already_read(store: Any, mapping: TraceMapping, trace_ids: list[str]) -> dict[str, Trace | Unmapped]:
    known = _READ.get()
    if known is None or known[1] != mapping or known[0] != _store_key(store):
        return {}
    return {trace_id: known[2][trace_id] for trace_id in trace_ids if trace_id in known[2]}


class TraceLookup:
    """Stored traces looked up by id in bulk and mapped, on one store kept open until :meth:`close`: for a reader
    that needs many traces in an order of its own (``trace_replay`` answers samples in the run's order).

    :param project_or_store: as for :func:`read_traces`.
    :param mapping: how spans map onto question, answer and contexts (default: both conventions).
    """

    def __init__(self, project_or_store: Any, *, mapping: TraceMapping | None = None):
        self.mapping = mapping or TraceMapping()
        self.store, self.owned = open_traces_store(project_or_store)

    def lookup(self, trace_ids: list[str]) -> dict[str, Trace | Unmapped]:
        """Trace id -> its :class:`Trace`, or :class:`Unmapped` with the reason; ids not stored are absent. Within
        :func:`traces_read` of this store and mapping, the traces read there are taken as they are."""
        ready = _already_read(self.store, self.mapping, trace_ids)
        rest = [trace_id for trace_id in trace_ids if trace_id not in ready]
        found = fetch_traces(self.store, rest) if rest else {}
        ready.update({trace_id: _mapped(trace_id, *found[trace_id], self.mapping) for trace_id in found})
        return ready

    def close(self) -> None:
        """Release the store when this lookup opened it."""
        if self.owned:
            self.store.close()
            self.owned = False


def read_traces(
    project_or_store: Any,
    *,
    where: Mapping[str, Any] | None = None,
    sample: str | float | None = None,
    mapping: TraceMapping | None = None,
    on_unmapped: Callable[[Unmapped], None] | None = None,
) -> Iterator[Trace]:
    """Stored traces as :class:`Trace` models, streamed in trace-id order.

    :param project_or_store: a results store, a project, a config file or folder, or a SQLAlchemy URL.
    :param where: filters: ``{"service.version": "1.2", "route": ["/a", "/b"], "since": "2025-01-01"}``; a key
        is a mapped field (model, service.name, service.version, session.id), a resource attribute or a span
        attribute; ``since``/``until`` bound the root span's start (ISO 8601, UTC unless an offset is given).
    :param sample: "5%" or 0.05: a subset chosen by a hash of the trace id, the same on every run.
    :param mapping: how spans map onto question, answer and contexts (default: both conventions).
    :param on_unmapped: called with each trace that cannot be mapped; without it, they are counted and a
        :class:`UserWarning` lists them at the end (never skipped silently).
    """
    unmapped: list[Unmapped] = []
    count = 0
    for item in scan_traces(project_or_store, where=where, sample=sample, mapping=mapping):
        if isinstance(item, Unmapped):
            count += 1
            if on_unmapped is not None:
                on_unmapped(item)
            elif len(unmapped) < SHOWN_UNMAPPED:
                unmapped.append(item)
        else:
            yield item
    if count and on_unmapped is None:
        warnings.warn(describe_unmapped(count, unmapped), stacklevel=2)


def describe_unmapped(count: int, shown: list[Unmapped]) -> str:
    """'N trace(s) could not be mapped: ID: reason; ...' with the first few listed."""
    listed = "; ".join(f"{u.trace_id}: {u.reason}" for u in shown)
    more = f" and {count - len(shown)} more" if count > len(shown) else ""
    return f"{count} stored trace(s) could not be mapped and were left out: {listed}{more}"
