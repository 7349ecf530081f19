"""Which stored traces a watch decides on next, found incrementally: a cursor over the spans in the order they were
stored, and the traces whose root span it has read and that are not decided yet. A look reads the spans after the
cursor a page at a time (:meth:`ragassay.store.watch.WatchTables.watch_spans_after`, a range of an index) and
checks only its candidates against the store, so its work and the memory it keeps depend on the traces in flight,
never on how many the watch has seen.

Exactly once: spans are stamped in commit order (:func:`ragassay.store.traces._stamp`), so no span is ever stored
before a cursor already read; the cursor and the waiting traces are committed with the decisions they lead to (in
the watch's progress), so a watcher killed at any moment goes on from the last commit, where every trace decided is
behind the cursor and out of the waiting set, and every trace not decided is either waiting or ahead of the cursor.

A trace becomes a candidate when its root span is read (a trace without a root span is never complete; its spans
are read past, and the trace is found again when its root comes). A candidate is complete, as before, when its
last span was stored at least ``[watch] quiet_s`` ago (checked in the store, so spans not read yet count). A trace
whose root span was stored before the watch started is not watched.
"""

from __future__ import annotations

import heapq
from typing import Any

PAGE = 2_000  # spans read at a time
PAGES_PER_LOOK = 8  # at most this many pages a look: its work stays bounded however far behind the watch is


class Tail:
    """The cursor (received_at, trace id, span id) and the waiting traces: trace id -> when its last span read
    was stored. ``state`` as kept in the watch's progress (None: start at ``since``)."""

    def __init__(self, state: dict[str, Any] | None, since: float):
        state = state or {}
        cursor = state.get("cursor") or [since, "", ""]
        self.cursor: tuple[float, str, str] = (float(cursor[0]), str(cursor[1]), str(cursor[2]))
        self.waiting: dict[str, float] = {k: float(v) for k, v in (state.get("waiting") or {}).items()}

    def state(self) -> dict[str, Any]:
        return {"cursor": list(self.cursor), "waiting": dict(self.waiting)}

    def read(self, store: Any, run_id: str, want: int) -> int:
        """Read new spans until ``want`` traces wait, the store has none newer, or :data:`PAGES_PER_LOOK` pages
        were read; the number of spans read."""
        read = 0
        for _ in range(PAGES_PER_LOOK):
            if len(self.waiting) >= want:
                break
            rows = store.watch_spans_after(self.cursor, PAGE)
            if not rows:
                break
            read += len(rows)
            self._take(store, run_id, rows)
            if len(rows) < PAGE:
                break
        return read

    def _take(self, store: Any, run_id: str, rows: list[tuple[float, str, str, bool]]) -> None:
        roots = {trace_id for _, trace_id, _, root in rows if root and trace_id not in self.waiting}
        decided = store.watch_decided(run_id, sorted(roots)) if roots else set()
        for at, trace_id, _, root in rows:
            last = self.waiting.get(trace_id)
            if last is not None:
                self.waiting[trace_id] = max(last, at)
            elif root and trace_id not in decided:
                self.waiting[trace_id] = at
        self.cursor = rows[-1][:3]

    def complete(self, store: Any, quiet_before: float, limit: int) -> list[str]:
        """Up to ``limit`` waiting traces whose last span (in the store) came at or before ``quiet_before``, the
        earliest first; the others go on waiting (with their last span as stored)."""
        due = [(last, trace_id) for trace_id, last in self.waiting.items() if last <= quiet_before]
        candidates = heapq.nsmallest(limit, due)
        if not candidates:
            return []
        arrivals = store.trace_arrivals([trace_id for _, trace_id in candidates])
        found = []
        for _, trace_id in candidates:
            stored = arrivals.get(trace_id)
            if stored is None:  # removed from the store since: nothing to decide on
                del self.waiting[trace_id]
                continue
            self.waiting[trace_id] = stored[0]
            if stored[0] <= quiet_before:
                found.append((stored[0], trace_id))
        return [trace_id for _, trace_id in sorted(found)]

    def decided(self, trace_ids: list[str]) -> None:
        """The traces are decided on (committed with this state)."""
        for trace_id in trace_ids:
            self.waiting.pop(trace_id, None)
