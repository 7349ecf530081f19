"""Real contention on one SQLite results file, driven by events, never by time.

- :class:`HeldLock`: another writer holding the file's write lock (``BEGIN IMMEDIATE`` on a plain sqlite3
  connection) until it is released: what a long transaction of any other process does to every writer.
- :class:`PauseAt`: stops the thread that runs an engine's ``count``-th statement matching a predicate, just
  before that statement, until the test says go; whatever the statements before it hold (an open write
  transaction, or nothing) stays held meanwhile. A long import paused in its middle is the import at its worst
  moment for everyone else, without making it long.

``WAIT_S`` only stops a hang: a passing test never waits for it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import event

WAIT_S = 300


class HeldLock:
    """``with HeldLock(path) as lock:`` the file's write lock is held until ``lock.release()`` or the end."""

    def __init__(self, path: Path):
        self.path = path
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> HeldLock:
        self.conn = sqlite3.connect(self.path, isolation_level=None, timeout=WAIT_S)
        self.conn.execute("BEGIN IMMEDIATE")
        return self

    def release(self) -> None:
        if self.conn is not None:
            self.conn.execute("ROLLBACK")
            self.conn.close()
            self.conn = None

    def __exit__(self, *exc_info: Any) -> None:
        self.release()


class PauseAt:
    """Pause the thread running ``engine``'s ``count``-th statement for which ``matches(statement)`` holds.

    ``paused`` is set once that thread waits; :meth:`go` lets it run on. Use as a context manager: the hook is
    removed (and a waiting thread let go) at the end, whatever happened.
    """

    def __init__(self, engine: Any, matches: Callable[[str], bool], count: int):
        self.engine, self.matches, self.count = engine, matches, count
        self.seen = 0
        self.paused = threading.Event()
        self._go = threading.Event()

    def _statement(self, conn, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        if not self.matches(statement):
            return
        self.seen += 1
        if self.seen == self.count:
            self.paused.set()
            self._go.wait(WAIT_S)

    def go(self) -> None:
        self._go.set()

    def __enter__(self) -> PauseAt:
        event.listen(self.engine, "before_cursor_execute", self._statement)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.go()
        event.remove(self.engine, "before_cursor_execute", self._statement)


def in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """Start ``work()`` in a thread; the dict gets its ``result`` or its ``error``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the test, which asserts on it
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="contention-work", daemon=True)
    thread.start()
    return thread, outcome
