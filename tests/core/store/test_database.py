"""The results store: migrations, refusing what it cannot read, atomic batches, reads."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from ragassay.errors import StoreError
from ragassay.models import Judgement, MetricValue, RAGOutput, TokenUsage
from ragassay.results import read_run, read_sample
from ragassay.store import SCHEMA_VERSION, open_store, store_url
from ragassay.store.database import UnitResult
from ragassay.store.schema import metric_values

from written_runs import empty_run


@pytest.fixture(params=["sqlite", "postgresql"])
def any_url(request, tmp_path):
    """The URL of a new results database: a SQLite file, or a database on the throwaway PostgreSQL server."""
    if request.param == "sqlite":
        return store_url("results.db", tmp_path)
    return request.getfixturevalue("postgres_url")


def make_run(store, run_id="r1", samples=("a", "b")):
    empty_run(store, run_id, ("sys",), samples)


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


def test_write_read_and_replace_failed_unit(any_url):
    store = open_store(any_url)
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
    run = read_run(store, "r1")
    assert sorted((q, o.status) for (_, q), o in run.outputs.items()) == [("a", "ok"), ("b", "ok")]
    assert {(r.question_id, r.label, r.value) for r in run.records(kind="metric", repeat=0)} == {
        ("a", "m", 1.0),
        ("b", "m", 0.5),
        ("b", "u", None),
    }
    _, payloads = read_sample(store, "r1", "b")
    assert payloads[("sys", "b")].context_ids == ["d#0"]


@pytest.mark.parametrize("replace_existing", [False, True])
def test_a_failing_batch_writes_nothing(any_url, replace_existing):
    store = open_store(any_url)
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
        store.write_units("r1", [good, dup], replace_existing=replace_existing)  # a duplicate metric row
    assert read_run(store, "r1").outputs == {}


def test_get_run_by_prefix_and_unknown(any_url):
    store = open_store(any_url)
    make_run(store, "abc123")
    make_run(store, "abd456")
    assert store.get_run("abc")["id"] == "abc123"
    with pytest.raises(StoreError, match="ambiguous"):
        store.get_run("ab")
    with pytest.raises(StoreError, match="'zz' not found. Known runs"):
        store.get_run("zz")
    with pytest.raises(StoreError, match="has no sample 'nope'"):
        read_sample(store, "abc123", "nope")


def test_any_sqlalchemy_url(tmp_path):
    url = f"sqlite:///{tmp_path / 'x' / 'nested.db'}"
    store = open_store(url)
    make_run(store)
    assert [r["id"] for r in store.list_runs()] == ["r1"]


def usage(model, tokens):
    return TokenUsage(input_tokens=tokens, output_tokens=1, calls=1, by_model={model: TokenUsage(input_tokens=tokens)})


def test_every_reader_gives_the_same_rows_on_every_backend(any_url):
    store = open_store(any_url)
    make_run(store, "r_1%", samples=("a", "b", "c"))
    make_run(store, "rx1x", samples=("a",))
    units = [
        UnitResult(
            "sys",
            q,
            "ok",
            RAGOutput(answer=f"answer {q}", contexts=["c", " "], retrieved=True),
            metrics=[
                MetricValue(metric="m", value=0.25, details={"k": [1, 2]}),
                MetricValue(metric="m", value=0.75, repeat=1, usage=usage("openai/unpriced-x", 10)),
                MetricValue(metric="u", value=None, unscored_reason="no references"),
            ],
            judgements=[Judgement(judge="j", verdict="correct", score=1.0, usage=usage("openai/unpriced-y", 5))],
        )
        for q in ("a", "b")
    ]
    store.write_units("r_1%", [*units, UnitResult("sys", "c", "failed", error="boom")])
    assert store.get_run("r_1%")["id"] == "r_1%"  # LIKE wildcards in a prefix match themselves only
    with pytest.raises(StoreError, match="not found"):
        store.get_run("r_1_")
    listed = {r["id"]: r for r in store.list_runs()}
    assert (listed["r_1%"]["outputs"], listed["r_1%"]["failed"], listed["r_1%"]["systems"]) == (3, 1, 1)
    assert (listed["rx1x"]["outputs"], listed["rx1x"]["failed"]) == (0, 0)
    run = read_run(store, "r_1%")
    assert sorted((r.question_id, r.label, r.value) for r in run.records(kind="metric", repeat=0)) == [
        ("a", "m", 0.25),
        ("a", "u", None),
        ("b", "m", 0.25),
        ("b", "u", None),
    ]
    assert sorted((r.question_id, r.repeat, r.value) for r in run.repeats()) == [
        ("a", 0, 0.25),
        ("a", 1, 0.75),
        ("b", 0, 0.25),
        ("b", 1, 0.75),
    ]
    assert [r.details for r in run.records(kind="metric", label="m", repeat=0)] == [{"k": [1, 2]}] * 2
    outputs = {q: o for (_, q), o in run.outputs.items()}
    assert (outputs["a"].retrieved, outputs["a"].retrieved_count, outputs["c"].status) == (True, 1, "failed")
    spent = run.evaluation_usages("sys")
    assert (sum(u.input_tokens for u in spent), sum(u.calls for u in spent)) == (30, 4)
    assert sorted(m for u in spent for m in u.unpriced) == ["openai/unpriced-x"] * 2 + ["openai/unpriced-y"] * 2
    assert {u.cost_usd for u in spent} == {None}  # an unpriced model: the cost is unknown, never 0
    stored = store.stored_units("r_1%")
    assert stored[("sys", "a")].metrics == {"m", "u"} and stored[("sys", "a")].repeats == {("m", 1)}
    one, _ = read_sample(store, "r_1%", "a")
    assert sorted(r.label for r in one.records(kind="metric", repeat=0)) == ["m", "u"]
    rows = one.stored_rows  # every stored column, for `ragassay show --format json`
    assert [(r["system"], r["answer"], r["sample_key"]) for r in rows.outputs] == [("sys", "answer a", None)]
    assert {(r["metric"], r["repeat"], r["output_id"]) for r in rows.metrics} == {
        ("m", 0, rows.outputs[0]["id"]),
        ("m", 1, rows.outputs[0]["id"]),
        ("u", 0, rows.outputs[0]["id"]),
    }
    assert [(r["judge"], r["unpriced"]) for r in rows.judgements] == [("j", "openai/unpriced-y")]
    store.close()


def test_replace_existing_stores_a_unit_computed_twice_once(any_url):
    store = open_store(any_url)
    make_run(store)
    first = UnitResult("sys", "a", "ok", RAGOutput(answer="first"), metrics=[MetricValue(metric="m", value=0.0)])
    store.write_units("r1", [first])
    again = UnitResult("sys", "a", "ok", RAGOutput(answer="again"), metrics=[MetricValue(metric="m", value=1.0)])
    with pytest.raises(IntegrityError):  # the default refuses a second copy (UNIQUE run_id, system, question_id)
        store.write_units("r1", [again])
    store.write_units("r1", [again], replace_existing=True)  # the same result object, written again
    stored = store.stored_units("r1")[("sys", "a")].output_id
    assert list(read_run(store, "r1").outputs) == [("sys", "a")]
    assert [r["id"] for r in read_sample(store, "r1", "a")[0].stored_rows.outputs] == [stored]
    assert [(r.label, r.value) for r in read_run(store, "r1").records(kind="metric")] == [("m", 1.0)]
    assert store.load_output(stored).answer == "again"
    with store.engine.connect() as conn:  # the first copy's metric value went with it
        assert conn.execute(select(func.count()).select_from(metric_values)).scalar() == 1
    store.close()


def test_replace_existing_rewrites_values_added_to_a_stored_output(any_url):
    """A unit that only adds metric values to its stored output, redone by another worker, is stored once."""
    store = open_store(any_url)
    make_run(store)
    base = UnitResult("sys", "a", "ok", RAGOutput(answer="x"), metrics=[MetricValue(metric="m", value=0.0)])
    store.write_units("r1", [base])
    base_id = store.stored_units("r1")[("sys", "a")].output_id

    def added(value):
        return UnitResult(
            "sys",
            "a",
            "ok",
            RAGOutput(answer="x"),
            output_id=base_id,
            metrics=[MetricValue(metric="n", value=value)],
        )

    store.write_units("r1", [added(0.5)], replace_existing=True)
    store.write_units("r1", [added(0.75)], replace_existing=True)  # the same unit's values, computed again
    assert sorted((r.label, r.value) for r in read_run(store, "r1").records(kind="metric")) == [("m", 0.0), ("n", 0.75)]
    with pytest.raises(IntegrityError):  # without it, a second copy of the value is refused
        store.write_units("r1", [added(1.0)])
    store.close()


def test_a_run_is_read_back_in_chunks_and_by_samples(any_url, monkeypatch):
    monkeypatch.setattr("ragassay.store.database.SAMPLES_PER_INSERT", 3)  # samples stored 3 rows per insert
    store = open_store(any_url)
    ids = [f"q{i}" for i in range(8)]
    make_run(store, "r1", samples=ids)
    make_run(store, "r2", samples=ids)
    assert read_run(store, "r1").question_ids == ids  # every chunk, in order
    assert not store.has_outputs("r1")
    results = [
        UnitResult(
            "sys",
            qid,
            "ok" if i % 3 else "failed",
            RAGOutput(answer=qid) if i % 3 else None,
            metrics=[MetricValue(metric="m", value=0.5), MetricValue(metric="m", value=0.7, repeat=1)] if i % 3 else [],
            system_key="k",
            sample_key=f"s-{qid}",
        )
        for i, qid in enumerate(ids[:6])
    ]
    store.write_units("r1", results)
    whole = store.stored_units("r1")
    assert dict(store.iter_stored_units("r1", chunk=2)) == whole and len(whole) == 6  # id ranges of 2 outputs
    some = store.stored_units_of("r1", ["sys", "other"], ["q1", "q3", "q7"])
    assert sorted(some) == [("sys", "q1"), ("sys", "q3")] and some[("sys", "q1")] == whole[("sys", "q1")]
    assert whole[("sys", "q1")].metrics == {"m"} and whole[("sys", "q1")].repeats == {("m", 1)}
    assert store.has_outputs("r1") and not store.has_outputs("r2")
    assert store.has_reusable("r2", ["k"]) and not store.has_reusable("r1", ["k"]) and not store.has_reusable("r2", [])
    found = store.reusable_outputs("r2", ["k"], ["s-q0", "s-q1", "s-q2", "s-q9"])
    assert sorted(found) == [("k", "s-q1"), ("k", "s-q2")]  # ok outputs only, these samples only
    assert found == {key: value for key, value in store.reusable_outputs("r2", ["k"]).items() if key in found}
    store.close()


def test_batches_hold_the_records_in_their_order(any_url):
    store = open_store(any_url)
    make_run(store, "r1", samples=("a", "b", "c"))
    units = [
        UnitResult(
            "sys",
            q,
            "ok",
            RAGOutput(answer=q),
            metrics=[
                MetricValue(metric="m", value=0.5 + i / 10),
                MetricValue(metric="u", value=None, unscored_reason="none"),
            ],
            judgements=[Judgement(judge="j", verdict="correct", score=1.0, usage=usage("openai/unpriced-y", 5))],
        )
        for i, q in enumerate(("a", "b", "c"))
    ]
    store.write_units("r1", units)
    for kind, count in (("metric", 6), ("judge", 3)):
        batched = [tuple(row) for batch in store.score_batches("r1", kind) for row in batch]
        assert batched == list(store.score_records("r1", kind)) and len(batched) == count
    for payloads in (False, True):
        batched = [tuple(row) for batch in store.output_batches("r1", payloads=payloads) for row in batch]
        assert batched == list(store.output_records("r1", payloads=payloads)) and len(batched) == 3
        assert all(len(row) == 15 + payloads for row in batched)
    store.close()
