"""A run into a results file that does not exist yet: its first calls go out while the file is created.

Opening the results store costs ``ragassay run`` about 0.13 s of CPU before its first model call: importing
SQLAlchemy, creating and migrating the file, taking the run's lease and recording the run with its samples. When
the configured SQLite file does not exist yet, nothing can be stored in it, so none of that has to come first:

1. :func:`claim_new_file` creates the file, empty, exclusively (``O_CREAT | O_EXCL``), and returns a
   :class:`NewResultsFile` in place of the store;
2. the runner asks it what is stored (nothing: no run to resume, no outputs to reuse) and records the new run
   with it (kept until the file is open);
3. the file is opened on a thread (:func:`~ragassay.store.open_store`, then the run's lease, then the run) at the
   first moment the event loop is free once the run is recorded: when the first calls are out and the loop waits
   for the model, so the thread has the CPU to itself; at the latest :data:`OPEN_AT_LATEST_S` after the run is
   recorded (a system whose preparation holds the loop longer still gets its lease and its run stored);
4. everything else asked of it (the first write of results, the end of the run) waits for that opening and then
   goes to the opened store; an opening that failed raises its error there (the same one-line
   :class:`~ragassay.errors.StoreError` as at the start).

A file that exists (even empty), a folder that is not there or cannot be written, a URL that is not a plain
SQLite file, a URL with a registered store backend, or the Ray executor: the store opens first, as before.

The one case that costs something: another process starting the same config on the same new file within those
first moments. Whichever takes the run's lease first runs it. If that is the other process, this one raises
:class:`NewFileLost` at its first write, dropping the results it had (those of the calls made before that write,
as when a write fails: at most about a second of them, :mod:`ragassay.engine.flushing`), and :func:`ragassay.api.run`
starts again the ordinary way: it refuses, or with ``--wait`` waits and resumes what the other process stored.
Those calls count against the session's budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from pathlib import Path
from typing import Any

from ..errors import LeaseHeldError

#: Seconds after the run is recorded before the opening may start (when the event loop is next free: the start-up
#: before the first calls holds the loop, so the opening waits for it to end).
OPEN_WHEN_FREE_S = 0.02
#: Seconds after that at which the opening starts even if the loop has not been free.
OPEN_AT_LATEST_S = 1.0


class NewFileLost(LeaseHeldError):
    """Another process took the run's lease in the new results file while this one made its first calls.

    ``ledger``: the budget ledger of the calls made meanwhile (set by :func:`ragassay.api.run`, which carries it
    into the ordinary run that follows, so those calls count against the session's budget)."""

    ledger: Any = None


def claim_new_file(url: str, *, key: str, retry_s: float) -> NewResultsFile | None:
    """A :class:`NewResultsFile` for ``url`` (a ``[project] results`` URL, ``${VAR}`` expanded here) when it
    names a SQLite file that does not exist yet and could be created here (created now, empty); else None."""
    from .backends import backend_for
    from .urls import sqlite_file

    path = sqlite_file(url, key) if backend_for(url) is None else None
    if path is None or not path.parent.is_dir():
        return None
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    except OSError:  # there already, or not creatable here: the ordinary opening says why, if anything
        return None
    return NewResultsFile(url, path, key=key, retry_s=retry_s)


class NewResultsFile:
    """The results store of a run into a file this process has just created (see the module docstring)."""

    def __init__(self, url: str, path: Path, *, key: str, retry_s: float):
        self.url, self.path, self.key, self.retry_s = url, path, key, retry_s
        self._lease_key: str | None = None
        self._run: tuple[Any, ...] | None = None  # create_run's arguments
        self._run_id: str | None = None
        self._store: Any = None
        self._lease: Any = None
        self._error: BaseException | None = None
        self._started = False
        self._start_lock = threading.Lock()
        self._go = threading.Event()  # open now
        self._opened = threading.Event()

    # -- what is stored: nothing until the file is open (then: what the store says) -------------------------------

    def find_run(self, fingerprint: str) -> dict[str, Any] | None:
        return self._store.find_run(fingerprint) if self._open_now() else None

    def has_outputs(self, run_id: str) -> bool:
        return self._store.has_outputs(run_id) if self._open_now() else False

    def has_reusable(self, run_id: str, system_keys: list[str]) -> bool:
        return self._store.has_reusable(run_id, system_keys) if self._open_now() else False

    def create_run(self, run: dict[str, Any], systems: Any, samples: Any) -> None:
        """Record the run: written once the file is open, before anything else is. The opening starts here."""
        if self._started:
            raise RuntimeError("a new results file records one run, before it is opened")
        self._run, self._run_id = (run, systems, samples), run["id"]
        self._open_soon()

    def lease(self, key: str, *, wait: bool = False, on_wait: Any = None) -> _PendingLease:
        """The run's lease, taken when the file is opened (``wait``: see :class:`NewFileLost`)."""
        self._lease_key = key
        return _PendingLease(self)

    # -- everything else: once the file is open -------------------------------------------------------------------

    def finish_run(self, run_id: str, status: str, warnings: list[str]) -> None:
        if self._wait_for_opening(raise_error=False):
            self._store.finish_run(run_id, status, warnings)

    def close(self) -> None:
        """Release the lease and close the store, opened first if it has not been (a run stopped before its first
        call is recorded, as with the file opened first); a file whose run never began is removed. Once only:
        a second call does nothing."""
        with self._start_lock:
            never_started, self._started = not self._started, True
        if never_started:
            self._opened.set()  # nothing will open it now: nothing waits for that
            with contextlib.suppress(OSError):
                if self.path.stat().st_size == 0:
                    self.path.unlink()
            return
        self._go.set()
        self._opened.wait()
        lease, store, self._lease, self._store = self._lease, self._store, None, None
        if lease is not None:
            lease.release()
        if store is not None:
            store.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        self._wait_for_opening(raise_error=True)
        return getattr(self._store, name)

    # -- the opening ---------------------------------------------------------------------------------------------

    def _open_soon(self) -> None:
        """Open the file when the running event loop is next free, :data:`OPEN_WHEN_FREE_S` from now, or
        :data:`OPEN_AT_LATEST_S` from now (at once where no loop runs here)."""
        self._start()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._go.set()
            return
        loop.call_later(OPEN_WHEN_FREE_S, self._go.set)

    def _start(self) -> None:
        """Start the thread that opens the file (it waits for :attr:`_go`, or :data:`OPEN_AT_LATEST_S`)."""
        with self._start_lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._open, name="ragassay-results-file", daemon=True).start()

    def _open(self) -> None:
        from .. import collector

        self._go.wait(OPEN_AT_LATEST_S)
        try:
            with collector.loading():  # SQLAlchemy and the store's modules load here (ragassay.collector)
                from .connect import open_store

                self._store = open_store(self.url, create=True, key=self.key, retry_s=self.retry_s)
            if self._lease_key is not None:
                self._lease = self._store.lease(self._lease_key)
            if self._run is not None:
                self._store.create_run(*self._run)
                if self._lease is not None:
                    self._lease.attach(self._run_id)
        except LeaseHeldError as exc:
            self._error = NewFileLost(str(exc))
        except BaseException as exc:  # noqa: BLE001 - raised where the store is next used
            self._error = exc
        finally:
            self._opened.set()

    def _open_now(self) -> bool:
        """True when the file has been opened (and the store can be asked)."""
        return self._opened.is_set() and self._error is None

    def _wait_for_opening(self, *, raise_error: bool) -> bool:
        """Open the file now if that has not begun, and wait for it; True when the store is open."""
        self._start()
        self._go.set()
        self._opened.wait()
        if self._error is not None and raise_error:
            raise self._error
        return self._error is None


class _PendingLease:
    """The lease of a :class:`NewResultsFile`'s run: taken with the opening; released with the file."""

    def __init__(self, new_file: NewResultsFile):
        self._new_file = new_file
        self.notes: list[str] = []  # a new file holds no earlier lease to take over

    @property
    def lost(self) -> str | None:
        lease = self._new_file._lease
        return None if lease is None else lease.lost

    def attach(self, run_id: str) -> None:
        """Recorded with the run when the file is opened."""

    def __enter__(self) -> _PendingLease:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        """The lease is released when the file is closed (:meth:`NewResultsFile.close`)."""
