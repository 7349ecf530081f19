"""Store v9 -> v10: the watch's cursor index on ``trace_spans`` (received_at, trace id, span id, parent) replaces
the index on received_at alone; spans stored before keep their stamps and are read in cursor order."""

from __future__ import annotations

from sqlalchemy import create_engine, inspect

from ragassay.store import SCHEMA_VERSION, open_store, store_url
from ragassay.store.migrations import _v10_span_cursor, migrate
from ragassay.store.protocols import SpanRow


def _indexes(conn) -> set[str]:
    return {i["name"] for i in inspect(conn).get_indexes("trace_spans")}


def test_a_v9_store_gains_the_cursor_index_and_keeps_its_spans(tmp_path):
    url = store_url("results.db", tmp_path)
    engine = create_engine(url)
    with engine.begin() as conn:
        assert migrate(conn, 9)[-1] == 9
        assert "ix_trace_spans_received" in _indexes(conn)
        conn.exec_driver_sql("INSERT INTO trace_resources (key, attributes_json) VALUES ('k', '{}');")
        conn.exec_driver_sql(
            "INSERT INTO trace_spans VALUES ('b' || printf('%031d', 0), 'c' || printf('%015d', 0), NULL, 0, 'k', "
            "'{}', 5.0)"
        )
    engine.dispose()
    store = open_store(url)
    try:
        assert SCHEMA_VERSION >= 10
        with store.engine.connect() as conn:
            assert "ix_trace_spans_cursor" in _indexes(conn) and "ix_trace_spans_received" not in _indexes(conn)
        store.write_spans([[SpanRow("a" * 32, "a" * 16, None, 0, {"service.name": "x"}, "{}")]])
        rows = store.watch_spans_after((0.0, "", ""), 10)
        assert [r[0] for r in rows][0] == 5.0 and rows[1][0] > 5.0 and [r[3] for r in rows] == [True, True]
    finally:
        store.close()


def test_migrating_twice_changes_nothing(tmp_path):
    url = store_url("results.db", tmp_path)
    open_store(url).close()
    engine = create_engine(url)
    with engine.begin() as conn:
        before = _indexes(conn)
        _v10_span_cursor(conn)
        assert _indexes(conn) == before
    engine.dispose()
