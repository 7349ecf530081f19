"""What ``ragassay serve`` keeps between requests: each run read once per version, with what its pages computed.

A run's pages are pure functions of the stored run and the page's settings, and reading a 10,000-sample run and
bootstrapping its intervals takes seconds. So the app keeps, per run, the read run (:class:`RunData`) and what
the pages computed from it (comparison, sections, failure rows), but only for the run's current version: every
request first asks the store for the version (:meth:`ragassay.store.protocols.FastReads.run_version`, one cheap
statement that changes with every write to the run, a status change, a resume, or its lease being taken,
released or going stale), then reuses what it kept for that version or reads and computes again. So a page never
shows stale data: a page of a new version is computed before it is shown, by the request itself or, when the
app prepares pages (:mod:`.prepare`), by the background thread that the request then waits for.

The version is asked before the run is read: a write landing during the read makes the kept data newer than its
version, never older, and the next request sees a new version and reads again.

A page is kept with its recipe (:meth:`RunEntry.page`: how to compute it from any version of the run), and a new
version of a run inherits the recipes of the pages viewed at the old one, so the preparer can compute them again.

A store without ``run_version`` (another backend) gets no cache: each request reads the run again.

What is computed at once is bounded (:class:`ComputeSlots`): at most :data:`COMPUTED_AT_ONCE` values of the app's
runs are computed at the same time (a page of a 100,000-sample run with a new ``?seed=`` takes about a minute of
CPU and a few hundred MiB); a request for one more waits for a slot, a request for a value already kept takes
none.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Callable, Hashable
from typing import Any

RUNS_KEPT = 4  # runs (each at its latest version) kept at once
VALUES_KEPT = 64  # computed values kept per run (one per page and settings)
RECIPES_KEPT = 8  # pages of a run computed again at its next version (the most recently viewed)
COMPUTED_AT_ONCE = 2  # values computed at the same time, by requests and the preparer together


class ComputeSlots:
    """At most ``size`` computations at once, over every run of an app. A computation inside another (a page
    reading its run) runs in its caller's slot."""

    def __init__(self, size: int = COMPUTED_AT_ONCE):
        self.size = size
        self._free = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._inside = threading.local()
        self.waiting = 0  # computations waiting for a slot now

    @contextlib.contextmanager
    def slot(self):
        """Hold a slot while the block runs (waiting for one if all are taken)."""
        if getattr(self._inside, "held", False):
            yield
            return
        with self._lock:
            self.waiting += 1
        self._free.acquire()
        with self._lock:
            self.waiting -= 1
        self._inside.held = True
        try:
            yield
        finally:
            self._inside.held = False
            self._free.release()


class RunEntry:
    """One run at one version: the run read once (lazily) and the values computed from it, each once.

    Thread safe: one lock per value, so concurrent requests (and the preparer's thread) compute each value once
    (a second caller waits for the first and reuses its result) while other values of the run are computed
    beside it. A value needs only values below it (a page needs the comparison, which needs the run), so the
    locks are always taken in one order. A value not kept is computed in a slot of :class:`ComputeSlots`, taken
    before its lock (a thread waiting for a slot holds no lock, so the slots add no deadlock).
    """

    def __init__(self, store: Any, run_id: str, version: tuple | None, slots: ComputeSlots | None = None):
        self.store, self.run_id, self.version = store, run_id, version
        self.slots = slots or ComputeSlots()  # shared by the entries of one RunCache
        self._values: collections.OrderedDict[Hashable, Any] = collections.OrderedDict()
        self._computing: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()
        #: key -> how to compute that page from an entry (:meth:`page`), the most recently used last
        self.recipes: collections.OrderedDict[Hashable, Callable[[RunEntry], Any]] = collections.OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The value kept under ``key``, or ``compute()`` kept under it (the least recently used of more than
        :data:`VALUES_KEPT` values is dropped). An exception is not kept: the next request computes again."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
            computing = self._computing.setdefault(key, threading.Lock())
        with self.slots.slot(), computing:  # a second caller waits here for the first
            with self._lock:
                if key in self._values:
                    return self._values[key]
            try:
                value = compute()
            except BaseException:
                with self._lock:
                    self._computing.pop(key, None)
                raise
            with self._lock:
                self._values[key] = value
                self._computing.pop(key, None)
                while len(self._values) > VALUES_KEPT:
                    self._values.popitem(last=False)
            return value

    def page(self, key: Hashable, recipe: Callable[[RunEntry], Any]) -> Any:
        """:meth:`get` of ``recipe(self)``, remembering the recipe: the next version of the run can compute the
        same page again before it is asked for (:mod:`.prepare`)."""
        with self._lock:
            self.recipes[key] = recipe
            self.recipes.move_to_end(key)
            while len(self.recipes) > RECIPES_KEPT:
                self.recipes.popitem(last=False)
        return self.get(key, lambda: recipe(self))

    def has(self, key: Hashable) -> bool:
        """Whether the value of ``key`` is kept."""
        with self._lock:
            return key in self._values

    def run(self, payloads: bool | str = False):
        """The run (:func:`ragassay.results.read_run`), read once; with ``payloads``, read with every output's
        JSON (a second read of the outputs only, for a run whose samples carry a ``group_id``, as the
        breakdowns page needs; ``"all"``: whatever its samples, as the trajectories page needs)."""
        from ...results import read_run
        from ...results.read import with_payloads

        plain = self.get(("run", False), lambda: read_run(self.store, self.run_id))
        if not payloads or (payloads != "all" and not self.get("grouped", lambda: _grouped(plain))):
            return plain
        return self.get(("run", True), lambda: with_payloads(self.store, plain))


class RunCache:
    """The runs a running app keeps: at most :data:`RUNS_KEPT`, each at its latest version only."""

    def __init__(self, store: Any, size: int = RUNS_KEPT, slots: ComputeSlots | None = None):
        self.store, self.size = store, size
        self.slots = slots or ComputeSlots()  # what the app computes at once, over all its runs
        self._entries: collections.OrderedDict[str, RunEntry] = collections.OrderedDict()
        self._lock = threading.Lock()
        self.reads = 0  # entries made (each reads its run at most once): a fresh version, or a run not kept

    def entry(self, ref: str, *, viewed: bool = True) -> RunEntry:
        """The entry of the run ``ref`` (an id or unique prefix) at its current version: the kept one when the
        version is unchanged, else a fresh one (replacing the old, and inheriting its recipes). Raises the
        store's error for an unknown or ambiguous ``ref``. ``viewed``: the run counts as the most recently
        viewed (the preparer's own look-ups leave the order alone)."""
        if not hasattr(self.store, "run_version"):
            return RunEntry(self.store, self.store.get_run(ref)["id"], None, self.slots)
        run_id, version = self.store.run_version(ref)
        with self._lock:
            entry = self._entries.get(run_id)
            if entry is None or entry.version != version:
                self.reads += 1
                fresh = RunEntry(self.store, run_id, version, self.slots)
                if entry is not None:
                    fresh.recipes.update(entry.recipes)
                entry = self._entries[run_id] = fresh
            if viewed:
                self._entries.move_to_end(run_id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
            return entry

    def forget(self, run_id: str) -> None:
        """Keep nothing more of ``run_id`` (a run no longer in the store)."""
        with self._lock:
            self._entries.pop(run_id, None)

    def kept(self) -> list[RunEntry]:
        """The kept entries, the most recently viewed first."""
        with self._lock:
            return list(reversed(self._entries.values()))


def _grouped(run) -> bool:
    """Whether a sample of ``run`` carries a ``group_id``."""
    import json

    return any(json.loads(raw).get("group_id") is not None for raw in run.sample_json)
