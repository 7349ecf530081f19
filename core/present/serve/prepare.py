"""Pages prepared before they are asked for: the one background thread of ``ragassay serve`` (:class:`Preparer`).

Computing a page of a 10,000-sample run (reading it, bootstrapping its intervals, drawing its plots) takes about a
second; the preparer does it before the page is asked for:

- at start, the default pages (:func:`ragassay.present.serve.sections.default_pages`: every tab of the run, the
  comparison, breakdowns, cost, failures, and robustness, drift or a plugin's page where the run has them) of the
  :data:`NEWEST` newest runs;
- after any page of a run is loaded, the run's other default pages at that version;
- every :data:`POLL_S` seconds it asks the version of each run the app keeps (:meth:`RunCache.kept`, one cheap
  statement each); a run that changed gets, at its new version, the pages viewed at the old one (their
  recipes, :meth:`RunEntry.page`) and its default pages computed again, so a refresh during a running
  evaluation mostly finds the new version ready.

It never makes a page stale: a request asks the run's version itself and takes the entry of that version; when
the preparer is computing the value that request needs, the request waits for it (one lock per value,
:class:`ragassay.present.serve.cache.RunEntry`) and never gets an older version. The work is bounded: one thread, one
page at a time, the most recently viewed run first; before each page it checks the run's version and moves on
to the newer one. A failing computation is logged (logger ``ragassay.present.serve``) and not kept, so the request for
that page computes it again (and shows its error); the thread goes on. It runs with the app's lifespan (starts
with the server, stops with it) and is a daemon thread, so it never holds a process open.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Any

NEWEST = 2  # runs whose default pages are prepared at start
POLL_S = 1.0  # seconds between two looks at the versions of the kept runs

log = logging.getLogger("ragassay.serve")


class Preparer:
    """The background preparation of the pages of the runs a :class:`ragassay.present.serve.cache.RunCache` keeps."""

    def __init__(self, cache: Any, *, newest: int = NEWEST, poll_s: float = POLL_S, sections: Any = None):
        from ..sections.registered import Sections

        self.cache, self.newest, self.poll_s = cache, newest, poll_s
        #: the registered sections whose pages are prepared (those of the process-wide plugin host by default)
        self.sections = sections or Sections.of()
        self._wanted: collections.OrderedDict[str, None] = collections.OrderedDict()  # next run last
        self._cond = threading.Condition()
        self._stopping, self._busy = False, False
        self._thread: threading.Thread | None = None
        self.prepared = 0  # pages (and runs read) computed in the background
        self.failed = 0  # computations that raised (each logged)

    def start(self) -> None:
        """Start the thread (once); a store without run versions keeps nothing, so nothing is prepared."""
        if not hasattr(self.cache.store, "run_version"):
            return
        with self._cond:
            if self._thread is not None:
                return
            self._stopping, self._busy = False, True  # busy until the newest runs are listed
            self._thread = threading.Thread(target=self._work, name="ragassay-serve-prepare", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the thread: it ends after the value it is computing (waits at most ``timeout`` seconds)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)

    @property
    def alive(self) -> bool:
        """Whether the thread runs."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def viewed(self, run_id: str) -> None:
        """A page of ``run_id`` was loaded: prepare the run's other pages at its version, before any other run."""
        with self._cond:
            self._wanted[run_id] = None
            self._wanted.move_to_end(run_id)
            self._cond.notify_all()

    def wait_idle(self, timeout: float, *, until: Any = None) -> bool:
        """Wait until nothing is left to prepare and ``until()`` (when given) is true, checked again after each
        step of the thread (False after ``timeout`` seconds): for tests and benchmarks, which so wait for the
        event they assert (a poll that saw a new version: ``until``), never for time."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not self._wanted and not self._busy and (until is None or until()), timeout
            )

    def _work(self) -> None:
        try:
            newest = [run["id"] for run in self.cache.store.list_runs()[: self.newest]]
        except Exception:
            log.warning("ragassay serve: could not list the runs to prepare", exc_info=True)
            newest = []
        with self._cond:
            for run_id in reversed(newest):  # the newest is prepared first
                self._wanted.setdefault(run_id, None)
            self._busy = False
        next_poll, failing = time.monotonic() + self.poll_s, False
        while True:
            with self._cond:
                while not (self._stopping or self._wanted) and time.monotonic() < next_poll:
                    self._cond.wait(next_poll - time.monotonic())
                if self._stopping:
                    return
                poll = time.monotonic() >= next_poll
                run_id = None if poll or not self._wanted else self._wanted.popitem(last=True)[0]
                self._busy = True
            try:
                if poll:
                    next_poll = time.monotonic() + self.poll_s
                    self._poll()
                    failing = False
                elif run_id is not None:
                    self._prepare(run_id)
            except Exception:  # a store error (the database went away): logged once, the thread goes on
                if not failing:
                    log.warning("ragassay serve: preparing pages failed", exc_info=True)
                failing = True
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _poll(self) -> None:
        """Queue every kept run whose version changed (the least recently viewed first, so it comes last); a run
        no longer in the store is forgotten."""
        from ...errors import StoreError, StoreUnavailableError

        for entry in reversed(self.cache.kept()):
            try:
                changed = self.cache.entry(entry.run_id, viewed=False) is not entry
            except StoreError as exc:
                if isinstance(exc, StoreUnavailableError):
                    raise
                self.cache.forget(entry.run_id)  # deleted: nothing to prepare
                continue
            if changed:
                with self._cond:
                    self._wanted[entry.run_id] = None
                    self._wanted.move_to_end(entry.run_id)

    def _prepare(self, run_id: str) -> None:
        """The pages viewed at the run's previous versions (most recent first), then its default pages."""
        from .sections import default_pages, recipe

        entry = self.cache.entry(run_id, viewed=False)
        todo = list(reversed(entry.recipes.items()))
        if not self._compute(entry, "tabs", None):  # reads the run; its tabs say which default pages it has
            return
        viewed = {key for key, _ in todo}
        todo += [(page, recipe(*page)) for page in default_pages(entry, self.sections) if page not in viewed]
        for key, make in todo:
            if self._stopping:
                return
            if self.cache.entry(run_id, viewed=False) is not entry:  # a newer version: prepare that instead
                self.viewed(run_id)
                return
            self._compute(entry, key, make)

    def _compute(self, entry: Any, key: Any, recipe: Any) -> bool:
        """Compute one value of ``entry`` (``recipe(entry)``, or the run's tabs); False when it failed (logged)."""
        from .sections import tabs

        try:
            if recipe is None:
                tabs(entry, self.sections)
            else:
                entry.get(key, lambda: recipe(entry))
        except Exception:
            self.failed += 1
            log.warning("ragassay serve: preparing %s of run %s failed", key, entry.run_id[:12], exc_info=True)
            return False
        self.prepared += 1
        return True
