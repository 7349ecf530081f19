"""Progress of long phases and warnings, reported by components while a run builds its systems.

A component reports through its :class:`~ragassay.ComponentContext`: ``context.progress("corpus embedding",
done, total, "chunks")`` while it works and ``context.warn(message)`` for what a person should know. The
context hands each report to the observers the run registered (``ragassay run`` prints them: a live bar on a
terminal, plain phase lines otherwise); warnings are also stored with the run.

:class:`RunRuntime` is the in-process part of a context: the observers and the objects that components of one
run share (the dense retriever's query encoder, so that ``dense`` and ``hybrid`` embed a query once). It is
never sent to another process: a pickled context arrives with an empty one.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
from collections.abc import Callable, Hashable
from typing import Any

log = logging.getLogger("ragassay.phases")

__all__ = ["PhaseProgress", "RunRuntime", "reported_index"]


@dataclasses.dataclass(frozen=True)
class PhaseProgress:
    """One report of a long phase: ``done`` of ``total`` ``unit`` (``total`` None when unknown).

    ``phase`` names what is done ("chunking", "index (bm25)", "corpus embedding"); a report with
    ``done == total`` ends the phase. ``note`` says something worth showing with it ("cache hit", "failed").
    """

    phase: str
    done: int
    total: int | None = None
    unit: str = "items"
    note: str = ""

    @property
    def finished(self) -> bool:
        """Whether this report ends the phase."""
        return self.total is not None and self.done >= self.total


class RunRuntime:
    """Observers and shared objects of one context, in this process only (pickled as a fresh, empty one)."""

    def __init__(self) -> None:
        self.progress_observers: list[Callable[[PhaseProgress], None]] = []
        self.warning_observers: list[Callable[[str], None]] = []
        self._shared: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def __reduce__(self):
        return (RunRuntime, ())

    def shared(self, key: Hashable, factory: Callable[[], Any]) -> Any:
        """The object stored under ``key``, made by ``factory()`` on first use (once, also across threads)."""
        with self._lock:
            if key not in self._shared:
                self._shared[key] = factory()
            return self._shared[key]

    def emit_progress(self, event: PhaseProgress) -> None:
        """Hand ``event`` to every progress observer (an observer that fails is logged, never fatal)."""
        for observer in list(self.progress_observers):
            _call(observer, event)

    def emit_warning(self, message: str) -> None:
        """Hand ``message`` to every warning observer."""
        for observer in list(self.warning_observers):
            _call(observer, message)


def _call(observer: Callable[[Any], None], value: Any) -> None:
    try:
        observer(value)
    except Exception:  # noqa: BLE001 - a display must not fail the build; said in the log
        log.warning("progress observer %r failed", observer, exc_info=True)


def reported_index(index: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a retriever's ``index(chunks)`` so that it reports the phase ``index (<name>)`` in chunks.

    Applied by :class:`ragassay.Retriever` to every subclass that defines ``index``: a BM25 index, a dense
    index or a third-party one all show as a phase without reporting anything themselves. A subclass calling
    ``super().index`` reports one phase.
    """

    @functools.wraps(index)
    def wrapper(self, chunks, *args, **kwargs):
        if getattr(self, "_ragassay_indexing", False):
            return index(self, chunks, *args, **kwargs)
        chunks = chunks if hasattr(chunks, "__len__") else list(chunks)
        phase, total = f"index ({self.name})", len(chunks)
        self.context.progress(phase, 0, total, "chunks")
        self._ragassay_indexing = True
        try:
            result = index(self, chunks, *args, **kwargs)
        except BaseException:
            self.context.progress(phase, total, total, "chunks", note="failed")
            raise
        finally:
            self._ragassay_indexing = False
        self.context.progress(phase, total, total, "chunks")
        return result

    wrapper._ragassay_reported = True
    return wrapper
