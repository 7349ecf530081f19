"""Rows of an outputs file kept on disk, by key: a private temporary SQLite file, not a dict in memory.

The ``precomputed`` adapter reads a file of one output per sample once and then looks a row up per sample. A
dict of every row would make the driver's memory grow with the run (about 57 MiB from 20,000 to 100,000 rows);
:class:`RowFile` keeps them in an anonymous SQLite file (removed when closed or when the process ends, even after
``kill -9``) and holds at most one batch of :data:`BATCH` rows in memory while it is being filled.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable

BATCH = 2_000  # rows held in memory before they are written to the file
_PER_QUERY = 500  # keys per IN list: under every SQLite build's parameter limit


class RowFile:
    """``key -> (line, row text)`` on disk: :meth:`add` every row, :meth:`flush`, then :meth:`get` them."""

    def __init__(self) -> None:
        self._db = sqlite3.connect("", check_same_thread=False)  # "": a private temporary file
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("CREATE TABLE rows (key TEXT PRIMARY KEY, line INTEGER NOT NULL, row TEXT NOT NULL)")
        self._lock = threading.Lock()
        self._batch: dict[str, tuple[int, str]] = {}
        self.count = 0

    def add(self, key: str, line: int, row: str) -> tuple[str, int, int] | None:
        """Keep ``row`` (read on ``line``) under ``key``. A key given twice: (the key, the later line, the earlier
        line), and nothing more is kept; None otherwise. A key of a row written to the file already is found
        when the batch is written (every :data:`BATCH` rows, and by :meth:`flush`)."""
        earlier = self._batch.get(key)
        if earlier is not None:
            return key, line, earlier[0]
        self._batch[key] = (line, row)
        return self.flush() if len(self._batch) >= BATCH else None

    def flush(self) -> tuple[str, int, int] | None:
        """Write the rows held in memory to the file; a key the file holds already: (the key, its line in the
        batch, its line in the file) for the first such row in reading order, and nothing is written; None
        otherwise."""
        if not self._batch:
            return None
        keys = list(self._batch)
        with self._lock:
            found: dict[str, int] = {}
            for start in range(0, len(keys), _PER_QUERY):
                chunk = keys[start : start + _PER_QUERY]
                marks = ",".join("?" * len(chunk))
                found.update(self._db.execute(f"SELECT key, line FROM rows WHERE key IN ({marks})", chunk).fetchall())
            if found:
                key = next(k for k in keys if k in found)
                return key, self._batch[key][0], found[key]
            self._db.executemany("INSERT INTO rows VALUES (?, ?, ?)", ((k, *v) for k, v in self._batch.items()))
        self.count += len(self._batch)
        self._batch = {}
        return None

    def get(self, key: str) -> tuple[int, str] | None:
        """(line, row text) of ``key``, or None."""
        with self._lock:
            found = self._db.execute("SELECT line, row FROM rows WHERE key = ?", (key,)).fetchone()
        return None if found is None else (found[0], found[1])

    def keys_not_in(self, keys: Iterable[str], shown: int) -> tuple[int, list[str]]:
        """How many stored keys are not among ``keys``, and the first ``shown`` of them in sorted order."""
        with self._lock:
            self._db.execute("CREATE TEMP TABLE IF NOT EXISTS given (key TEXT PRIMARY KEY)")
            self._db.execute("DELETE FROM given")
            batch: list[tuple[str]] = []
            for key in keys:
                batch.append((key,))
                if len(batch) >= BATCH:
                    self._db.executemany("INSERT OR IGNORE INTO given VALUES (?)", batch)
                    batch = []
            self._db.executemany("INSERT OR IGNORE INTO given VALUES (?)", batch)
            extra = "FROM rows WHERE key NOT IN (SELECT key FROM given)"
            count = self._db.execute(f"SELECT count(*) {extra}").fetchone()[0]
            first = [k for (k,) in self._db.execute(f"SELECT key {extra} ORDER BY key LIMIT ?", (shown,))]
            self._db.execute("DELETE FROM given")
        return count, first

    def close(self) -> None:
        """Drop the rows (the temporary file goes with them)."""
        with self._lock:
            self._db.close()
