"""Store v8 -> v9: the watch's tables (``watch_traces``, ``watch_state``) and the index on
``trace_spans.received_at``; a watch commit stores its samples, values, decisions and progress together, and a
commit that fails stores none of them."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect
from sqlalchemy.exc import IntegrityError

from ragassay.models import MetricValue, RAGOutput, Sample
from ragassay.store import SCHEMA_VERSION, open_store, store_url
from ragassay.store.database import UnitResult
from ragassay.store.migrations import _v9_watch, migrate


def _run(store) -> None:
    run = {"id": "w", "fingerprint": "fw", "project": "p", "config_path": "x", "config_json": "{}"}
    store.create_run({**run, "spec_json": "{}", "ragassay_version": "0", "sample_count": 0}, [("sys", "{}")], [])


def _unit(qid: str) -> UnitResult:
    return UnitResult("sys", qid, "ok", RAGOutput(answer="a"), metrics=[MetricValue(metric="m", value=0.5)])


def test_a_v8_store_gains_the_watch_tables_and_a_commit_is_all_or_nothing(tmp_path):
    url = store_url("results.db", tmp_path)
    engine = create_engine(url)
    with engine.begin() as conn:
        assert migrate(conn, 8)[-1] == 8
        assert not inspect(conn).has_table("watch_traces")
    engine.dispose()
    store = open_store(url)
    assert SCHEMA_VERSION >= 9
    with store.engine.connect() as conn:
        assert {"watch_traces", "watch_state"} <= set(inspect(conn).get_table_names())
        indexes = {i["name"] for i in inspect(conn).get_indexes("trace_spans")}
        assert "ix_trace_spans_received" in indexes or "ix_trace_spans_cursor" in indexes  # v10 replaced it
    _run(store)
    sample = Sample(question_id="t1", question="q?")
    store.commit_watch(
        "w", [("t1", sample.model_dump_json())], [_unit("t1")], None, [("t1", "scored", None, 1.0)], "{}"
    )
    with pytest.raises(IntegrityError):  # t1 again: the unit exists, so nothing of this commit is stored
        store.commit_watch(
            "w", [("t2", sample.model_dump_json())], [_unit("t1")], None, [("t2", "scored", None, 2.0)], '{"x": 1}'
        )
    assert store.watch_counts("w") == {"scored": 1} and store.watch_state("w") == "{}"
    assert [qid for qid, _ in store.sample_rows("w")] == ["t1"]
    store.close()


def test_migrating_twice_changes_nothing(tmp_path):
    url = store_url("results.db", tmp_path)
    open_store(url).close()
    engine = create_engine(url)
    with engine.begin() as conn:
        _v9_watch(conn)
    engine.dispose()
