"""What ``ragassay watch`` keeps in the results store (schema version 9), mixed into
:class:`~ragassay.store.ResultsStore` (the :class:`~ragassay.store.protocols.WatchStore` protocol).

A watch is one run that grows: each batch of traces it scores is committed in **one** transaction with its new
samples (``run_samples``), its outputs, metric values and judgements (the ordinary rows, written by
:func:`ragassay.store.writes.write_batch`'s own code), a row per trace it decided on in ``watch_traces`` (scored,
unscored for budget, not mapped, left out by its rules) and its progress in ``watch_state`` (the detectors' states,
the budget spent, the alarms, each metric's bounded history per time bin for the live page of ``ragassay serve``:
:mod:`ragassay.watch.history`). A watcher killed at any moment has committed a batch wholly or not at all: restarted,
it finds the traces it had not committed among the pending ones again, and never one it committed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, insert, select, tuple_, update

from . import schema as t
from .healing import healing
from .writes import write_in


class WatchTables:
    """The watch's rows (needs ``self.engine`` and ``self.healer``)."""

    engine: Any

    @healing
    def watch_spans_after(self, after: tuple[float, str, str], limit: int) -> list[tuple[float, str, str, bool]]:
        """(received_at, trace id, span id, is root) of the stored spans after the cursor ``after`` in the order
        (received_at, trace id, span id), at most ``limit`` (a range of the ``ix_trace_spans_cursor`` index: the
        work is the page's, whatever the number stored). Spans are stamped in commit order
        (:func:`ragassay.store.traces._stamp`), so a span stored later is never before a cursor already read."""
        s = t.trace_spans.c
        query = (
            select(s.received_at, s.trace_id, s.span_id, s.parent_span_id.is_(None))
            .where(tuple_(s.received_at, s.trace_id, s.span_id) > tuple_(*after))
            .order_by(s.received_at, s.trace_id, s.span_id)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [(float(r[0]), r[1], r[2], bool(r[3])) for r in conn.execute(query)]

    @healing
    def trace_arrivals(self, trace_ids: Sequence[str]) -> dict[str, tuple[float, bool]]:
        """trace id -> (when its last span was received, whether its root span is stored), for those stored."""
        s = t.trace_spans.c
        roots = func.sum(s.parent_span_id.is_(None).cast(t.Integer))
        found: dict[str, tuple[float, bool]] = {}
        with self.engine.connect() as conn:
            for chunk in _chunks(sorted(set(trace_ids))):
                query = select(s.trace_id, func.max(s.received_at), roots).where(s.trace_id.in_(chunk))
                for trace_id, last, root in conn.execute(query.group_by(s.trace_id)):
                    found[trace_id] = (float(last), bool(root))
        return found

    @healing
    def watch_decided(self, run_id: str, trace_ids: Sequence[str]) -> set[str]:
        """Those of ``trace_ids`` the watch ``run_id`` has decided on (any status)."""
        w = t.watch_traces.c
        found: set[str] = set()
        with self.engine.connect() as conn:
            for chunk in _chunks(sorted(set(trace_ids))):
                query = select(w.trace_id).where(w.run_id == run_id, w.trace_id.in_(chunk))
                found.update(row[0] for row in conn.execute(query))
        return found

    @healing
    def watch_state(self, run_id: str) -> str | None:
        """The watch's stored progress (JSON), or None before its first commit."""
        c = t.watch_state.c
        with self.engine.connect() as conn:
            return conn.execute(select(c.state_json).where(c.run_id == run_id)).scalar()

    @healing
    def set_watch_state(self, run_id: str, state_json: str) -> None:
        """Replace the watch's progress alone (an alarm marked delivered)."""
        with self.engine.begin() as conn:
            _put_state(conn, run_id, state_json, time.time())

    def commit_watch(
        self,
        run_id: str,
        samples: Sequence[tuple[str, str]],
        results: Sequence[Any],
        context: Any,
        decisions: Sequence[tuple[str, str, str | None, float | None]],
        state_json: str,
    ) -> None:
        """In one transaction: the new samples ((question_id, sample JSON), appended to the run), the unit results
        (:class:`~ragassay.store.units.UnitResult`), one row per decided trace ((trace id, status, reason, start
        seconds)) and the watch's progress. Retried whole on a transient error; all of it is stored or none.
        ``context``: the :class:`~ragassay.store.units.WriteContext` (None: no prices, no reuse keys)."""
        if context is None:
            from ..llm.pricing import PriceTable
            from .units import WriteContext

            context = WriteContext(PriceTable())

        def attempt() -> None:
            now = time.time()
            with self.engine.begin() as conn:
                _append_samples(conn, run_id, samples)
                if results:
                    write_in(conn, run_id, results, context, now)
                _decide(conn, run_id, decisions, now)
                _put_state(conn, run_id, state_json, now)

        self.healer(attempt)

    @healing
    def watch_counts(self, run_id: str) -> dict[str, int]:
        """status -> traces the watch decided on with it."""
        c = t.watch_traces.c
        query = select(c.status, func.count()).where(c.run_id == run_id).group_by(c.status)
        with self.engine.connect() as conn:
            return {status: int(n) for status, n in conn.execute(query)}

    @healing
    def watch_traces(self, run_id: str, status: str, *, last: int | None = None) -> list[tuple[str, str | None]]:
        """(trace id, reason) of the traces decided with ``status``, in the order decided (the ``last`` ones)."""
        c = t.watch_traces.c
        query = select(c.trace_id, c.reason, c.position).where(c.run_id == run_id, c.status == status)
        if last is not None:
            query = query.order_by(c.position.desc()).limit(last)
        with self.engine.connect() as conn:
            rows = sorted(conn.execute(query).all(), key=lambda row: row[2])
        return [(row[0], row[1]) for row in rows]


def _chunks(ids: list[str], size: int = 500) -> list[list[str]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def _append_samples(conn: Any, run_id: str, samples: Sequence[tuple[str, str]]) -> None:
    if not samples:
        return
    # the run's sample count is the next position (kept below): a key read, not a scan of the run's samples
    start = conn.execute(select(func.coalesce(t.runs.c.sample_count, 0)).where(t.runs.c.id == run_id)).scalar()
    rows = [
        {"run_id": run_id, "question_id": qid, "position": start + i, "sample_json": raw}
        for i, (qid, raw) in enumerate(samples)
    ]
    conn.execute(insert(t.run_samples), rows)
    conn.execute(update(t.runs).where(t.runs.c.id == run_id).values(sample_count=start + len(rows)))


def _decide(conn: Any, run_id: str, decisions: Sequence[tuple[str, str, str | None, float | None]], now: float) -> None:
    if not decisions:
        return
    c = t.watch_traces.c
    start = conn.execute(select(func.coalesce(func.max(c.position), -1)).where(c.run_id == run_id)).scalar() + 1
    rows = [
        {
            "run_id": run_id,
            "trace_id": trace_id,
            "position": start + i,
            "status": status,
            "reason": reason,
            "started_at": started_at,
            "decided_at": now,
        }
        for i, (trace_id, status, reason, started_at) in enumerate(decisions)
    ]
    conn.execute(insert(t.watch_traces), rows)


def _put_state(conn: Any, run_id: str, state_json: str, now: float) -> None:
    c = t.watch_state.c
    changed = conn.execute(
        update(t.watch_state).where(c.run_id == run_id).values(state_json=state_json, updated_at=now)
    ).rowcount
    if not changed:
        conn.execute(insert(t.watch_state).values(run_id=run_id, state_json=state_json, updated_at=now))
