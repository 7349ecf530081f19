"""Batch writes under failures: atomic per batch, idempotent when written again, values never misattached.

A failure is injected at every statement of a batch write (and at its commit), on SQLite and PostgreSQL; a
second writer stores outputs before the batch is written again. SQLite hands out the ids a rollback took back
once more (``outputs.id`` has no AUTOINCREMENT): a retry that kept the failed attempt's ids would attach this
batch's values to the second writer's outputs. Every stored value carries its unit in ``details`` so the tests
can check it belongs to the output of its own (system, sample).
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from ragassay.errors import StoreUnavailableError
from ragassay.models import Judgement, MetricValue, RAGOutput, Sample
from ragassay.store import open_store, store_url
from ragassay.store.database import UnitResult

from written_runs import empty_run

QUESTIONS = ("a", "b", "c", "d", "e")


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return store_url("results.db", tmp_path)
    return request.getfixturevalue("postgres_url")


def disk_full(dialect: str) -> Exception:
    """The error a full disk raises in each driver."""
    if dialect == "sqlite":
        return sqlite3.OperationalError("database or disk is full")
    import psycopg

    return psycopg.errors.DiskFull("could not extend file: No space left on device")


def locked(dialect: str) -> Exception:
    """A transient error of each driver: a locked file, a serialization failure."""
    if dialect == "sqlite":
        return sqlite3.OperationalError("database is locked")
    import psycopg

    return psycopg.errors.SerializationFailure("could not serialize access due to concurrent update")


def make_run(store, run_id: str) -> None:
    empty_run(store, run_id, ("s1", "s2"), QUESTIONS)


def values(system: str, qid: str, *metrics: str) -> list[MetricValue]:
    """Metric values that say which unit they were computed for."""
    return [MetricValue(metric=m, value=0.5, details={"unit": f"{system}/{qid}"}) for m in metrics]


def result(system: str, qid: str, *metrics: str, **fields) -> UnitResult:
    """An ok unit result with the given metric values."""
    output = RAGOutput(answer=f"{system} {qid}")
    return UnitResult(system, qid, "ok", output, metrics=values(system, qid, *metrics), **fields)


def judged(system: str, qid: str) -> UnitResult:
    """An ok unit result with a judgement and no metric value."""
    output = RAGOutput(answer=f"{system} {qid}")
    verdict = Judgement(judge="j", verdict="correct", score=1.0, details={"unit": f"{system}/{qid}"})
    return UnitResult(system, qid, "ok", output, judgements=[verdict])


def batch(store, run_id: str) -> list[UnitResult]:
    """A batch of every kind of result: fresh outputs, one replacing a stored failure, values added to a
    stored output, a judgement; after storing what it builds on."""
    store.write_units(run_id, [UnitResult("s1", "b", "failed", error="RuntimeError: x"), result("s1", "c", "m1")])
    stored = store.stored_units(run_id)
    return [
        result("s1", "a", "m1", "m2"),
        result("s2", "a", "m1", "m2"),
        result("s1", "b", "m1", "m2", replaces=stored[("s1", "b")].output_id),
        result("s1", "c", "m2", output_id=stored[("s1", "c")].output_id),
        judged("s2", "b"),
    ]


def second_writer(url: str, run_id: str) -> None:
    """Another process's writer storing an output (taking the next free id) between two attempts."""
    other = open_store(url)
    other.write_units(run_id, [result("s2", "e", "m1", "m2")])
    other.close()


def check_every_value_is_its_units(store, run_id: str) -> None:
    """Every metric value and judgement is attached to the output of the unit it was computed for, and the
    run holds exactly the batch, what it built on and the second writer's output."""
    with store.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT o.system, o.question_id, o.status, v.metric, v.details_json FROM outputs o "
                "LEFT JOIN metric_values v ON v.output_id = o.id WHERE o.run_id = :r "
                "UNION ALL SELECT o.system, o.question_id, o.status, 'judge:' || j.judge, j.details_json "
                "FROM outputs o JOIN judgements j ON j.output_id = o.id WHERE o.run_id = :r"
            ),
            {"r": run_id},
        ).all()
        orphans = conn.execute(
            text("SELECT count(*) FROM metric_values WHERE output_id NOT IN (SELECT id FROM outputs)")
        ).scalar()
    assert orphans == 0
    for system, qid, _, label, details in rows:
        if label is not None:
            assert json.loads(details)["unit"] == f"{system}/{qid}", f"{label} of {system}/{qid} is another unit's"
    assert sorted((s, q, st, label or "-") for s, q, st, label, _ in rows) == [
        ("s1", "a", "ok", "m1"),
        ("s1", "a", "ok", "m2"),
        ("s1", "b", "ok", "m1"),
        ("s1", "b", "ok", "m2"),
        ("s1", "c", "ok", "m1"),
        ("s1", "c", "ok", "m2"),
        ("s2", "a", "ok", "m1"),
        ("s2", "a", "ok", "m2"),
        ("s2", "b", "ok", "-"),
        ("s2", "b", "ok", "judge:j"),
        ("s2", "e", "ok", "m1"),
        ("s2", "e", "ok", "m2"),
    ]


class FailOnce:
    """Raise ``error`` once in the next batch write on one engine: just before its ``at``-th statement (at its
    commit when ``at`` is past the last one), or just before its first statement starting with ``before``."""

    def __init__(self, engine: Engine, error: Exception, *, at: int = 10**6, before: str | None = None):
        self.error, self.at, self.before = error, at, before
        self.seen, self.armed, self.fired = 0, True, False
        self.statements: list[str] = []
        event.listen(engine, "before_cursor_execute", self.statement)
        event.listen(engine, "commit", self.commit)

    def statement(self, conn, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        if self.armed:
            self.statements.append(statement.split("(")[0].strip())
            self.seen += 1
            if self.seen == self.at or (self.before and statement.startswith(self.before)):
                self.fire()

    def commit(self, conn) -> None:  # noqa: ANN001
        if self.armed and self.before is None:
            self.fire()

    def fire(self) -> None:
        self.fired, self.armed = True, False
        raise self.error


def statements_of_a_batch(url: str) -> list[str]:
    """The statements a batch write executes (measured on a run of its own)."""
    store = open_store(url)
    make_run(store, "probe")
    probe = batch(store, "probe")
    recorder = FailOnce(store.engine, RuntimeError("never"), before="never")
    store.write_units("probe", probe)
    recorder.armed = False
    store.close()
    return recorder.statements


def test_the_issue_reproducer_disk_full_after_the_outputs_insert(url):
    """The metric-values INSERT fails once with a full disk after the outputs INSERT; a second writer stores
    an output; the same batch written again stores every value with its own output."""
    store = open_store(url)
    make_run(store, "r1")
    pending = batch(store, "r1")
    fault = FailOnce(store.engine, disk_full(store.engine.dialect.name), before="INSERT INTO metric_values")
    with pytest.raises(StoreUnavailableError) as failed:
        store.write_units("r1", pending)
    message = str(failed.value)
    assert "disk is full" in message and "FOREIGN KEY" not in message and "INSERT" not in message
    assert fault.fired
    assert store.stored_units("r1").keys() == {("s1", "b"), ("s1", "c")}  # the failed batch left nothing
    second_writer(url, "r1")
    store.write_units("r1", pending)  # the same results, written again (a retry, a resume)
    check_every_value_is_its_units(store, "r1")
    store.close()


@pytest.mark.parametrize("kind", ["permanent", "transient"])
def test_a_failure_at_every_statement_of_a_batch_never_misattaches_a_value(url, kind, monkeypatch):
    """For every statement of a batch write (and its commit): fail there once, let a second writer store an
    output, write the batch again (the caller after a permanent error; the store itself after a transient
    one); every value ends on its own unit's output and nothing is stored twice."""
    statements = statements_of_a_batch(url)
    assert statements[0].startswith("DELETE") and any(s.startswith("INSERT INTO outputs") for s in statements)
    for at in range(1, len(statements) + 2):  # the last one: at the commit
        store = open_store(url)
        run_id = f"{kind}{at}"
        make_run(store, run_id)
        pending = batch(store, run_id)
        dialect = store.engine.dialect.name
        fault = FailOnce(store.engine, (disk_full if kind == "permanent" else locked)(dialect), at=at)
        if kind == "permanent":
            with pytest.raises(StoreUnavailableError):
                store.write_units(run_id, pending)
            second_writer(url, run_id)
            store.write_units(run_id, pending)
        else:
            monkeypatch.setattr(store.healer, "sleep", lambda _s, run_id=run_id: second_writer(url, run_id))
            store.write_units(run_id, pending)
            assert any("was unavailable" in note for note in store.healer.recoveries)
        assert fault.fired, f"no failure at statement {at}"
        check_every_value_is_its_units(store, run_id)
        store.close()


def test_a_lost_commit_acknowledgement_is_written_again_without_a_duplicate(url):
    """A commit that succeeded but whose acknowledgement was lost (the connection dropped) is retried: the
    retry replaces its own rows instead of failing on the UNIQUE constraint."""
    store = open_store(url)
    make_run(store, "r1")
    pending = batch(store, "r1")
    state = {"done": False}

    def commit_then_lose_it(conn) -> None:  # noqa: ANN001
        if not state["done"]:
            state["done"] = True
            conn.connection.dbapi_connection.commit()  # the commit happens...
            raise locked(store.engine.dialect.name)  # ...and the writer hears an error

    event.listen(store.engine, "commit", commit_then_lose_it)
    store.write_units("r1", pending)
    second_writer(url, "r1")
    check_every_value_is_its_units(store, "r1")
    store.close()


def test_a_run_whose_batch_write_fails_says_why_and_a_rerun_completes(project):
    """Through a whole run: the batch write fails once with a full disk after its outputs INSERT; the run stops
    with that cause (not a FOREIGN KEY error from writing the batch again with stale ids), and a re-run
    stores every value on its own output."""
    import ragassay

    open_store(store_url("ragassay-results.db", project.parent)).close()  # created and migrated before the fault
    fault = {"armed": True}

    def full_once(conn, cursor, statement, *rest) -> None:  # noqa: ANN001
        if fault["armed"] and statement.startswith("INSERT INTO metric_values"):
            fault["armed"] = False
            raise sqlite3.OperationalError("database or disk is full")

    event.listen(Engine, "before_cursor_execute", full_once)
    try:
        with pytest.raises(StoreUnavailableError, match="the disk is full") as failed:
            ragassay.run(project)
        assert "FOREIGN KEY" not in str(failed.value) and "INSERT" not in str(failed.value)
        assert not fault["armed"]
        stopped = open_store(store_url("ragassay-results.db", project.parent))
        assert stopped.list_runs()[0]["state"] == "interrupted"
        stopped.close()
        run = ragassay.run(project)
    finally:
        event.remove(Engine, "before_cursor_execute", full_once)
    assert run.summary.resumed and run.summary.failed == 0
    store = open_store(store_url("ragassay-results.db", project.parent))
    with store.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT o.system, o.question_id, count(j.judge) FROM outputs o "
                "LEFT JOIN judgements j ON j.output_id = o.id GROUP BY o.system, o.question_id"
            )
        ).all()
    store.close()
    assert sorted(rows) == [(s, q, 1) for s in ("bm25", "keyword") for q in ("q1", "q2", "q3")]


def test_a_transient_failure_while_creating_a_run_stores_every_sample_on_the_retry(url, tmp_path, monkeypatch):
    """create_run is retried whole after a transient error in its samples INSERT: the retry reads the spooled
    samples again from the start, so the run gets all of them (an iterator would have given none)."""
    from ragassay.engine.spool import SampleSpool

    store = open_store(url)
    monkeypatch.setattr(store.healer, "sleep", lambda _s: None)
    spool = SampleSpool.write(Sample(question_id=f"q{i}", question=f"question {i}?") for i in range(2_500))
    fault = FailOnce(store.engine, locked(store.engine.dialect.name), before="INSERT INTO run_samples")
    run = {"id": "r1", "fingerprint": "f", "project": "p", "config_path": "x", "config_json": "{}"}
    run |= {"spec_json": "{}", "ragassay_version": "0", "sample_count": len(spool)}
    store.create_run(run, [("s1", "{}")], spool.pairs())
    assert fault.fired
    assert [q for q, _ in store.sample_rows("r1")] == [f"q{i}" for i in range(2_500)]
    with pytest.raises(TypeError, match="re-iterable"):
        store.create_run({**run, "id": "r2"}, [("s1", "{}")], spool.records())
    spool.close()
    store.close()
