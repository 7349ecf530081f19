"""Spans are stamped (``received_at``) in the order their transactions commit, under the writers' lock: a later
write is stamped after every stored span even when the clock was set back, and an import's spans are stamped when
they are switched into the store, not when they were staged (so a watch's cursor never skips one)."""

from __future__ import annotations

import time

from ragassay.store import open_store, store_url
from ragassay.store import traces as store_traces
from ragassay.store.protocols import SpanRow


def _rows(trace: int, spans: int = 2) -> list[SpanRow]:
    tid = f"{trace:032x}"
    return [
        SpanRow(tid, f"{trace:08x}{k:08x}", None if k == 0 else f"{trace:08x}{0:08x}", k, {"service.name": "a"}, "{}")
        for k in range(spans)
    ]


def _stamps(store) -> dict[str, set[float]]:
    found: dict[str, set[float]] = {}
    for at, trace_id, _, _ in store.watch_spans_after((0.0, "", ""), 1_000):
        found.setdefault(trace_id, set()).add(at)
    return found


def test_a_later_write_is_stamped_after_every_stored_span_even_with_the_clock_set_back(tmp_path, monkeypatch):
    store = open_store(store_url("results.db", tmp_path))
    try:
        store.write_spans([_rows(1)])
        first = _stamps(store)[f"{1:032x}"]
        assert len(first) == 1  # one transaction, one stamp
        past = min(first) - 3600.0
        monkeypatch.setattr(store_traces.time, "time", lambda: past)  # the clock set back an hour
        store.write_spans([_rows(2)])
        second = _stamps(store)[f"{2:032x}"]
        assert len(second) == 1 and min(second) > max(first)
    finally:
        store.close()


def test_an_import_is_stamped_when_it_is_switched_in(tmp_path):
    store = open_store(store_url("results.db", tmp_path))
    try:
        before = time.time()

        def batches():
            yield _rows(1)
            time.sleep(0.05)  # decoding goes on; a receiver writes in between
            store.write_spans([_rows(9)])
            yield _rows(2)

        store.write_spans(batches())
        stamps = _stamps(store)
        imported = stamps[f"{1:032x}"] | stamps[f"{2:032x}"]
        assert len(imported) == 1 and min(imported) > max(stamps[f"{9:032x}"]) > before
        cursor_order = [trace_id for _, trace_id, _, _ in store.watch_spans_after((0.0, "", ""), 1_000)]
        assert cursor_order[:2] == [f"{9:032x}"] * 2  # the receiver's spans first: committed first
    finally:
        store.close()


def test_the_cursor_pages_through_equal_stamps_without_skipping_or_repeating(tmp_path):
    store = open_store(store_url("results.db", tmp_path))
    try:
        store.write_spans(iter([[span for n in range(1, 40) for span in _rows(n, 3)]]))  # one stamp for all
        seen, cursor = [], (0.0, "", "")
        while page := store.watch_spans_after(cursor, 7):
            seen += [(trace_id, span_id) for _, trace_id, span_id, _ in page]
            cursor = page[-1][:3]
        assert len(seen) == len(set(seen)) == 39 * 3 and seen == sorted(seen)
    finally:
        store.close()
