"""Remembering keys seen in a stream (question ids) with bounded memory.

A dataset of millions of samples must not be held to check that its question ids are unique. :class:`SeenKeys`
keeps the first ``in_memory`` keys in a dict; past that it moves them to a temporary SQLite file (deleted when
closed) and checks new keys in batches of ``batch``: a duplicate is then reported up to ``batch`` keys after it
was read, and :meth:`SeenKeys.flush` reports one in the last batch. Each key carries a small value (the line
it was read on) for the message.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from typing import Any

IN_MEMORY = 50_000
BATCH = 5_000
_PER_QUERY = 500  # keys per IN list: under every SQLite build's parameter limit


@dataclasses.dataclass(frozen=True)
class DuplicateKey:
    """A key seen twice: the value given with its first and with its second occurrence."""

    key: str
    first: Any
    second: Any


class SeenKeys:
    """Keys seen so far (see the module docstring); ``add`` reports a duplicate, never silently drops one."""

    def __init__(self, in_memory: int | None = None, batch: int | None = None):
        self.in_memory = IN_MEMORY if in_memory is None else in_memory
        self.batch = BATCH if batch is None else batch
        self.count = 0
        self._memory: dict[str, Any] = {}
        self._db: sqlite3.Connection | None = None

    def add(self, key: str, value: Any = None) -> DuplicateKey | None:
        """Remember ``key``; the duplicate found (of this key, or of one of the current batch) or None."""
        earlier = self._memory.get(key)
        if earlier is not None or key in self._memory:
            return DuplicateKey(key, earlier, value)
        self._memory[key] = value
        self.count += 1
        if self._db is None and len(self._memory) > self.in_memory:
            self._db = sqlite3.connect("")  # a private temporary file, removed on close
            self._db.execute("CREATE TABLE seen (key TEXT PRIMARY KEY, value) WITHOUT ROWID")
            self._db.execute("PRAGMA journal_mode = OFF")
            self._db.execute("PRAGMA synchronous = OFF")
            return self.flush()
        if self._db is not None and len(self._memory) >= self.batch:
            return self.flush()
        return None

    def flush(self) -> DuplicateKey | None:
        """Check the keys held in memory against the file and move them there (nothing before spilling)."""
        if self._db is None or not self._memory:
            return None
        keys = list(self._memory)
        found: dict[str, Any] = {}
        for start in range(0, len(keys), _PER_QUERY):
            chunk = keys[start : start + _PER_QUERY]
            marks = ",".join("?" * len(chunk))
            found.update(self._db.execute(f"SELECT key, value FROM seen WHERE key IN ({marks})", chunk).fetchall())
        if found:
            key = next(k for k in keys if k in found)  # the first in reading order
            return DuplicateKey(key, found[key], self._memory[key])
        self._db.executemany("INSERT INTO seen VALUES (?, ?)", self._memory.items())
        self._memory = {}
        return None

    def close(self) -> None:
        """Drop what is remembered (the temporary file included)."""
        self._memory = {}
        if self._db is not None:
            self._db.close()
            self._db = None
