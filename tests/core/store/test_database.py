"""The results store: migrations, refusing what it cannot read, atomic batches, reads."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy.exc import IntegrityError

from ragassay.errors import StoreError
from ragassay.models import Judgement, MetricValue, RAGOutput, Sample
from ragassay.store import SCHEMA_VERSION, open_store, store_url
from ragassay.store.database import UnitResult


def make_run(store, run_id="r1", samples=("a", "b")):
    store.create_run(
        {
            "id": run_id,
            "fingerprint": "f" + run_id,
            "project": "p",
            "config_path": "x",
            "config_json": "{}",
            "spec_json": "{}",
            "ragassay_version": "0",
            "sample_count": len(samples),
        },
        [("sys", "{}")],
        [Sample(question_id=q, question=f"question {q}?") for q in samples],
    )


def test_new_database_is_migrated_to_current_version(tmp_path):
    store = open_store(store_url("results.db", tmp_path))
    store.close()
    con = sqlite3.connect(tmp_path / "results.db")
    assert con.execute("select version from schema_version").fetchall() == [(SCHEMA_VERSION,)]
    tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
    assert {"runs", "outputs", "metric_values", "judgements", "run_samples", "run_systems"} <= tables


def test_newer_schema_is_refused_and_left_untouched(tmp_path):
    open_store(store_url("results.db", tmp_path)).close()
    con = sqlite3.connect(tmp_path / "results.db")
    con.execute("update schema_version set version = 99")
    con.commit()
    con.close()
    before = (tmp_path / "results.db").read_bytes()
    with pytest.raises(StoreError, match="schema version 99, newer than"):
        open_store(store_url("results.db", tmp_path))
    assert (tmp_path / "results.db").read_bytes() == before


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    (tmp_path / "notes.db").write_text("these are my notes, not a database\n" * 50)
    with pytest.raises(StoreError, match="cannot open results database"):
        open_store(store_url("notes.db", tmp_path))
    assert (tmp_path / "notes.db").read_text().startswith("these are my notes")


def test_missing_database_when_reading(tmp_path):
    with pytest.raises(StoreError, match="no results database"):
        open_store(store_url("none.db", tmp_path), create=False)


def test_write_read_and_replace_failed_unit(tmp_path):
    store = open_store(store_url("results.db", tmp_path))
    make_run(store)
    failed = UnitResult("sys", "a", "failed", error="RuntimeError: x")
    ok = UnitResult(
        "sys",
        "b",
        "ok",
        RAGOutput(answer="yes", contexts=["c"], context_ids=["d#0"]),
        metrics=[MetricValue(metric="m", value=0.5), MetricValue(metric="u", value=None, unscored_reason="no refs")],
        judgements=[Judgement(judge="j", verdict="correct", score=1.0)],
    )
    store.write_units("r1", [failed, ok])
    units = store.stored_units("r1")
    assert units[("sys", "a")].status == "failed"
    assert units[("sys", "b")].metrics == {"m", "u"} and units[("sys", "b")].judges == {"j"}
    retry = UnitResult(
        "sys",
        "a",
        "ok",
        RAGOutput(answer="now"),
        replaces=units[("sys", "a")].output_id,
        metrics=[MetricValue(metric="m", value=1.0)],
    )
    store.write_units("r1", [retry])
    rows = store.output_rows("r1")
    assert sorted((r["question_id"], r["status"]) for r in rows) == [("a", "ok"), ("b", "ok")]
    assert {(r["question_id"], r["metric"], r["value"]) for r in store.metric_rows("r1")} == {
        ("a", "m", 1.0),
        ("b", "m", 0.5),
        ("b", "u", None),
    }
    detail = store.sample_detail("r1", "b")
    assert detail["outputs"][0]["output"].context_ids == ["d#0"]


def test_a_failing_batch_writes_nothing(tmp_path):
    store = open_store(store_url("results.db", tmp_path))
    make_run(store)
    good = UnitResult("sys", "a", "ok", RAGOutput(answer="x"), metrics=[MetricValue(metric="m", value=1.0)])
    dup = UnitResult(
        "sys",
        "b",
        "ok",
        RAGOutput(answer="y"),
        metrics=[MetricValue(metric="m", value=1.0), MetricValue(metric="m", value=0.0)],
    )
    with pytest.raises(IntegrityError):
        store.write_units("r1", [good, dup])  # duplicate metric row violates the primary key
    assert store.output_rows("r1") == []


def test_get_run_by_prefix_and_unknown(tmp_path):
    store = open_store(store_url("results.db", tmp_path))
    make_run(store, "abc123")
    make_run(store, "abd456")
    assert store.get_run("abc")["id"] == "abc123"
    with pytest.raises(StoreError, match="ambiguous"):
        store.get_run("ab")
    with pytest.raises(StoreError, match="'zz' not found. Known runs"):
        store.get_run("zz")
    with pytest.raises(StoreError, match="has no sample 'nope'"):
        store.sample_detail("abc123", "nope")


def test_any_sqlalchemy_url(tmp_path):
    url = f"sqlite:///{tmp_path / 'x' / 'nested.db'}"
    store = open_store(url)
    make_run(store)
    assert [r["id"] for r in store.list_runs()] == ["r1"]
