"""The watch's tail: a look reads only the spans stored since the last one (a cursor kept with the progress), a
trace is a candidate once its root span is read and complete once quiet in the store, and a watcher that goes on
from its committed progress decides every trace exactly once."""

from __future__ import annotations

import json
import math
import time

from ragassay.store import open_store, store_url
from ragassay.store.protocols import SpanRow
from ragassay.watch.tail import Tail

RUN = "w"
NEVER_QUIET = -math.inf  # a look for which nothing is quiet yet
ALL_QUIET = math.inf


def _tid(n: int) -> str:
    return f"{n:032x}"


def _span(n: int, k: int) -> SpanRow:
    parent = None if k == 0 else f"{n:08x}{0:08x}"
    return SpanRow(_tid(n), f"{n:08x}{k:08x}", parent, k, {"service.name": "a"}, "{}")


def _trace(n: int, spans: int = 3) -> list[SpanRow]:
    return [_span(n, k) for k in range(spans)]


def _store(tmp_path):
    store = open_store(store_url("results.db", tmp_path))
    run = {"id": RUN, "fingerprint": "fw", "project": "p", "config_path": "x", "config_json": "{}"}
    store.create_run({**run, "spec_json": "{}", "ragassay_version": "0", "sample_count": 0}, [("sys", "{}")], [])
    return store


def _commit(store, tail: Tail, ids: list[str]) -> None:
    """Decide on ``ids`` (left out by the rules: no values) and commit the tail's state with them."""
    tail.decided(ids)
    decisions = [(trace_id, "skipped", "test", None) for trace_id in ids]
    store.commit_watch(RUN, [], [], None, decisions, json.dumps({"tail": tail.state()}))


def test_a_look_reads_only_the_spans_stored_since_the_last_one(tmp_path):
    store = _store(tmp_path)
    try:
        for n in range(60):
            store.write_spans([_trace(n)])
        tail = Tail(None, since=0.0)
        decided: list[str] = []
        while True:
            tail.read(store, RUN, 16)
            ids = tail.complete(store, ALL_QUIET, 16)
            if not ids:
                break
            _commit(store, tail, ids)
            decided += ids
        assert sorted(decided) == [_tid(n) for n in range(60)] and tail.waiting == {}
        store.write_spans([_trace(60), _trace(61)])
        assert tail.read(store, RUN, 16) == 6  # the two new traces' spans, not the 180 before them
        assert tail.complete(store, ALL_QUIET, 16) == [_tid(60), _tid(61)]
        assert len(json.dumps(tail.state())) < 400  # the progress holds the cursor and the waiting, not the past
    finally:
        store.close()


def test_a_trace_waits_for_its_root_and_for_quiet(tmp_path):
    store = _store(tmp_path)
    try:
        tail = Tail(None, since=0.0)
        store.write_spans([[_span(1, 1), _span(1, 2)]])  # children first, as an exporter may send them
        tail.read(store, RUN, 16)
        assert tail.waiting == {} and tail.complete(store, ALL_QUIET, 16) == []
        store.write_spans([[_span(1, 0)]])  # the root
        tail.read(store, RUN, 16)
        assert list(tail.waiting) == [_tid(1)]
        assert tail.complete(store, NEVER_QUIET, 16) == []
        root_at = tail.waiting[_tid(1)]
        store.write_spans([[_span(1, 3)]])  # another span, not read yet: the store says the trace is not quiet
        assert tail.complete(store, root_at, 16) == []
        assert tail.waiting[_tid(1)] > root_at
        assert tail.complete(store, ALL_QUIET, 16) == [_tid(1)]
    finally:
        store.close()


def test_going_on_from_the_committed_progress_decides_every_trace_once(tmp_path):
    store = _store(tmp_path)
    try:
        for n in range(10):
            store.write_spans([_trace(n)])
        first = Tail(None, since=0.0)
        first.read(store, RUN, 100)
        ids = first.complete(store, ALL_QUIET, 4)
        _commit(store, first, ids)
        first.read(store, RUN, 100)  # what it read after its last commit is lost with it ("killed")
        store.write_spans([_trace(10)])
        second = Tail(json.loads(store.watch_state(RUN))["tail"], since=0.0)
        later: list[str] = []
        for _ in range(5):
            second.read(store, RUN, 3)
            found = second.complete(store, ALL_QUIET, 3)
            _commit(store, second, found)
            later += found
        assert sorted(ids + later) == [_tid(n) for n in range(11)] and not set(ids) & set(later)
        assert store.watch_counts(RUN) == {"skipped": 11}
    finally:
        store.close()


def test_traces_stored_before_the_watch_started_are_not_watched(tmp_path):
    store = _store(tmp_path)
    try:
        store.write_spans([_trace(1)])
        since = time.time() + 1e-3
        while time.time() <= since:
            time.sleep(1e-3)
        store.write_spans([_trace(2)])
        tail = Tail(None, since=since)
        tail.read(store, RUN, 16)
        assert tail.complete(store, ALL_QUIET, 16) == [_tid(2)]
    finally:
        store.close()
