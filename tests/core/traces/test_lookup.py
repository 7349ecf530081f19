"""Reading stored traces by id in bulk (:class:`ragassay.traces.TraceLookup`, what ``trace_replay`` uses): the
same traces as the streamed read, unmappable ones with the reason, unknown ids absent, one query per chunk of
ids, and no connection held between reads; on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import event

from ragassay.store import open_store
from ragassay.store import traces as trace_tables
from ragassay.traces import TraceLookup, Unmapped, scan_traces
from ragassay.traces.ingest import import_paths

from otlp_traces import genai_trace, openinference_trace, sid, span, tid
from otlp_traces import request as otlp_request


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    spans = [span(tid(9), sid(9, 1), None, "root", {"input.value": "q?"})]  # no answer: unmappable
    for n in range(1, 6):
        spans += openinference_trace(n, f"Question {n}?", f"answer {n}") if n % 2 else genai_trace(n, f"Q{n}?", "a")
    (tmp_path / "t.json").write_text(json.dumps(otlp_request(spans)), encoding="utf-8")
    url = (
        f"sqlite:///{tmp_path / 'results.db'}" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    )
    store = open_store(url, create=True)
    import_paths(store, [tmp_path / "t.json"])
    yield store
    store.close()


def _span_queries(store) -> list[str]:
    seen: list[str] = []

    @event.listens_for(store.engine, "before_cursor_execute")
    def count(conn, cursor, statement, parameters, context, executemany):
        if "FROM trace_spans" in statement:
            seen.append(statement)

    return seen


def test_lookup_gives_the_streamed_traces_by_id_in_chunks_holding_nothing_between_reads(store, monkeypatch):
    monkeypatch.setattr(trace_tables, "IDS_PER_QUERY", 2)
    streamed = {item.trace_id: item for item in scan_traces(store)}
    queries = _span_queries(store)
    lookup = TraceLookup(store)
    try:
        wanted = [tid(5), tid(1), tid(9), "f" * 32, tid(3), tid(1)]  # any order, a duplicate, an unknown id
        found = lookup.lookup(wanted)
        assert store.engine.pool.checkedout() == 0  # no connection held between reads (PostgreSQL: not idle in one)
        again = lookup.lookup([tid(2), tid(4)])
    finally:
        lookup.close()
    assert sorted(found) == sorted({tid(1), tid(3), tid(5), tid(9)})  # the unknown id is absent
    assert {**found, **again} == {k: v for k, v in streamed.items() if k in {*found, *again}}
    assert isinstance(found[tid(9)], Unmapped) and found[tid(9)].reason.startswith("no answer")
    assert found[tid(3)].question == "Question 3?" and again[tid(2)].question == "Q2?"
    assert len(queries) == 3 + 1  # 5 distinct ids in chunks of 2, then one chunk


def test_lookup_of_nothing_reads_nothing(store):
    queries = _span_queries(store)
    lookup = TraceLookup(store)
    assert lookup.lookup([]) == {}
    lookup.close()
    assert queries == []
