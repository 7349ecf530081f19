"""Database errors: transient ones retried until a deadline, permanent ones one line with the cause and fix."""

from __future__ import annotations

import errno
import re
import sqlite3

import psycopg
import pytest
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError, OperationalError

from ragassay.errors import StoreUnavailableError
from ragassay.store import open_store, store_url
from ragassay.store.healing import Healer, diagnose, healing_stream


def wrapped(error: Exception, *, invalidated: bool = False) -> OperationalError:
    """A driver error as SQLAlchemy raises it (with the SQL and parameters it must never show)."""
    return OperationalError("INSERT INTO outputs (answer) VALUES (?)", ("secret answer",), error, invalidated)


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (wrapped(sqlite3.OperationalError("database is locked")), "locked"),
        (wrapped(psycopg.errors.AdminShutdown("terminating connection due to administrator command")), "restarting"),
        (wrapped(psycopg.errors.CannotConnectNow("the database system is starting up")), "starting up"),
        (wrapped(psycopg.errors.SerializationFailure("could not serialize access")), "serialization"),
        (wrapped(psycopg.errors.DeadlockDetected("deadlock detected")), "deadlock"),
        (wrapped(psycopg.OperationalError('connection to server at "127.0.0.1" failed: Connection refused')), "lost"),
        (wrapped(psycopg.OperationalError("server closed the connection unexpectedly"), invalidated=True), "lost"),
    ],
)
def test_transient_errors_are_recognised(error, cause):
    diagnosis = diagnose(error)
    assert diagnosis is not None and diagnosis.transient and cause in diagnosis.cause


@pytest.mark.parametrize(
    ("error", "cause", "fix"),
    [
        (wrapped(sqlite3.OperationalError("database or disk is full")), "disk is full", "free space"),
        (wrapped(sqlite3.OperationalError("attempt to write a readonly database")), "read-only", "writable"),
        (wrapped(sqlite3.OperationalError("unable to open database file")), "cannot be opened", "writable"),
        (wrapped(sqlite3.OperationalError("disk I/O error")), "disk I/O error", "check the disk"),
        (wrapped(psycopg.errors.DiskFull("could not extend file")), "disk is full", "free space"),
        (wrapped(psycopg.errors.ReadOnlySqlTransaction("read-only transaction")), "read-only", "primary"),
        (wrapped(psycopg.errors.InsufficientPrivilege("permission denied for table outputs")), "permission", "grant"),
        (OSError(errno.ENOSPC, "No space left on device"), "disk is full", "free space"),
        (OSError(errno.EROFS, "Read-only file system"), "read-only", "writable"),
        (PermissionError(errno.EACCES, "Permission denied"), "permission denied", "writable"),
    ],
)
def test_permanent_errors_are_recognised_with_a_fix(error, cause, fix):
    diagnosis = diagnose(error)
    assert diagnosis is not None and not diagnosis.transient
    assert cause in diagnosis.cause and fix in diagnosis.fix


def test_a_bug_is_not_an_infrastructure_error():
    duplicate = IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE constraint failed: metric_values.metric"))
    assert diagnose(duplicate) is None
    assert diagnose(ValueError("a bug")) is None


class Flaky:
    """Work that fails with ``error`` ``times`` times, then returns ``"done"``."""

    def __init__(self, error: Exception, times: int):
        self.error, self.left, self.calls = error, times, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.left:
            self.left -= 1
            raise self.error
        return "done"


def test_transient_errors_are_retried_and_the_outage_is_reported():
    waits = []
    healer = Healer("db.example/results", sleep=waits.append)
    work = Flaky(wrapped(psycopg.errors.AdminShutdown("terminating connection")), times=4)
    assert healer(work) == "done"
    assert work.calls == 5 and len(waits) == 4
    assert waits[-1] > waits[0] and max(waits) <= 2.0  # the backoff grows (with jitter), capped
    assert len(healer.recoveries) == 1 and "db.example/results was unavailable" in healer.recoveries[0]


def test_a_transient_error_past_the_deadline_stops_with_one_line():
    healer = Healer("/data/results.db", retry_s=0.2)
    work = Flaky(wrapped(sqlite3.OperationalError("database is locked")), times=10**6)
    with pytest.raises(StoreUnavailableError) as stopped:
        healer(work)
    message = str(stopped.value)
    assert work.calls >= 2
    waited = re.match(
        r"results database /data/results\.db: did not recover within (\d+\.\d) s: the file is locked", message
    )
    assert waited and float(waited.group(1)) >= 0.2  # it waited the whole deadline
    assert "[project] results_retry_s" in message and "resume" in message
    assert "\n" not in message and "INSERT" not in message and "secret answer" not in message


def test_a_permanent_error_stops_at_once_and_later_calls_do_not_wait_again():
    waits = []
    healer = Healer("/data/results.db", sleep=waits.append)
    full = r"/data/results.db: the disk is full \(database or disk is full\)\. Free space"
    with pytest.raises(StoreUnavailableError, match=full):
        healer(Flaky(wrapped(sqlite3.OperationalError("database or disk is full")), times=1))
    later = Flaky(wrapped(sqlite3.OperationalError("database is locked")), times=1)
    with pytest.raises(StoreUnavailableError):  # the run is stopping: its last writes do not wait a deadline
        healer(later)
    assert waits == [] and later.calls == 1


def test_a_store_that_stays_down_says_its_first_message_again_not_a_second_wrong_one():
    """The end of a failed run (the batch left in its buffer, its status, its lease) fails at once after the
    deadline: it must repeat how long the run waited, not say "did not recover within 0 s"."""
    healer = Healer("db.example/results", retry_s=1.0)
    down = wrapped(psycopg.OperationalError('connection to server at "127.0.0.1" failed: Connection refused'))
    with pytest.raises(StoreUnavailableError) as first:
        healer(Flaky(down, times=10**6))
    waited = re.search(r"did not recover within (\d+\.\d) s: the connection", str(first.value))
    assert waited and float(waited.group(1)) >= 1.0  # the whole deadline
    for _ in range(3):  # the last flush, the status, the lease: each tries once and says the same
        again = Flaky(down, times=1)
        with pytest.raises(StoreUnavailableError) as later:
            healer(again)
        assert str(later.value) == str(first.value) and again.calls == 1


def test_a_success_after_giving_up_ends_the_outage():
    """A long-running server (``ragassay label``, ``traces receive``) waits out a later outage in full."""
    waits: list[float] = []
    healer = Healer("/data/results.db", retry_s=0, sleep=waits.append)
    locked = wrapped(sqlite3.OperationalError("database is locked"))
    with pytest.raises(StoreUnavailableError):
        healer(Flaky(locked, times=1))
    assert healer(lambda: "back") == "back"
    healer.retry_s = 60
    later = Flaky(locked, times=3)
    assert healer(later) == "done" and later.calls == 4 and len(waits) == 3


def test_a_bug_is_raised_as_it_is_without_retries():
    healer = Healer("/data/results.db", sleep=lambda s: pytest.fail("a bug must not be retried"))
    with pytest.raises(ValueError, match="a bug"):
        healer(Flaky(ValueError("a bug"), times=1))


def test_the_password_never_appears_in_the_message():
    healer = Healer("postgresql+psycopg://me:***@db/results", retry_s=0, redact=lambda t: t.replace("hunter2", "***"))
    error = wrapped(psycopg.errors.InsufficientPrivilege('permission denied for user "me" (password hunter2)'))
    with pytest.raises(StoreUnavailableError) as stopped:
        healer(Flaky(error, times=1))
    assert "hunter2" not in str(stopped.value) and "me:***@db" in str(stopped.value)


def test_a_conflict_is_retried_only_when_the_caller_says_so():
    conflict = IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE constraint failed: outputs.run_id"))
    healer = Healer("/data/results.db", sleep=lambda s: None)
    assert healer(Flaky(conflict, times=2), also_transient=lambda e: isinstance(e, IntegrityError)) == "done"
    assert healer.recoveries == []  # a conflict between writers is not an outage
    with pytest.raises(IntegrityError):
        healer(Flaky(conflict, times=1))


# -- reads: what reporting commands and workers see -------------------------------------------------------------


class Rows:
    """A store-like object whose streamed read fails with ``error`` at row ``fail_at`` on its first
    ``attempts_failing`` attempts (0: before the first row)."""

    def __init__(self, error: Exception, *, fail_at: int, attempts_failing: int = 1):
        self.healer = Healer("/data/results.db", sleep=lambda s: None)
        self.error, self.fail_at, self.left = error, fail_at, attempts_failing
        self.attempts, self.closed = 0, 0

    @healing_stream
    def rows(self):
        self.attempts += 1
        failing = self.left > 0
        self.left -= 1
        try:
            for i in range(5):
                if failing and i == self.fail_at:
                    raise self.error
                yield i
        finally:
            self.closed += 1


def test_a_stream_broken_before_its_first_row_starts_again():
    source = Rows(wrapped(sqlite3.OperationalError("database is locked")), fail_at=0, attempts_failing=3)
    assert list(source.rows()) == [0, 1, 2, 3, 4]
    assert source.attempts == 4 and source.closed == 4 and len(source.healer.recoveries) == 1


def test_a_stream_broken_after_rows_were_handed_over_stops_with_one_line_not_duplicates():
    source = Rows(wrapped(sqlite3.OperationalError("database is locked")), fail_at=2)
    seen = []
    with pytest.raises(StoreUnavailableError, match=r"^results database /data/results.db: .*locked") as stopped:
        seen.extend(source.rows())
    assert seen == [0, 1] and source.attempts == 1  # never restarted: rows 0 and 1 would come twice
    assert "\n" not in str(stopped.value) and "INSERT" not in str(stopped.value)


def test_a_bug_in_a_stream_is_raised_as_it_is_and_a_stream_left_early_is_closed():
    with pytest.raises(ValueError, match="a bug"):
        list(Rows(ValueError("a bug"), fail_at=3).rows())
    source = Rows(ValueError("unused"), fail_at=9)
    stream = source.rows()
    assert next(stream) == 0
    stream.close()
    assert source.closed == 1


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return store_url("results.db", tmp_path)
    return request.getfixturevalue("postgres_url")


class FailingSelects:
    """The next ``times`` SELECT statements on ``engine`` fail with ``error`` (as the driver raises it)."""

    def __init__(self, engine, error: Exception, times: int):
        self.error, self.left = error, times
        event.listen(engine, "before_cursor_execute", self.statement)

    def statement(self, conn, cursor, statement, parameters, context, executemany) -> None:  # noqa: ANN001
        if self.left and statement.lstrip().upper().startswith("SELECT"):
            self.left -= 1
            raise self.error


def _reads(store) -> dict:
    """What the reading commands ask of a store, each read materialised."""
    return {
        "runs": lambda: [run["id"] for run in store.list_runs()],
        "run": lambda: store.get_run("r1")["id"],
        "holder": lambda: store.run_and_holder("r1")[1],
        "sample rows": lambda: [qid for qid, _ in store.sample_rows("r1")],
        "outputs": lambda: sorted(row[:2] for row in store.output_records("r1")),
        "scores": lambda: sorted(row[:4] for row in store.score_records("r1", "metric")),
        "score batches": lambda: sorted(tuple(r[:4]) for batch in store.score_batches("r1", "metric") for r in batch),
        "output batches": lambda: sorted(tuple(r[:2]) for batch in store.output_batches("r1") for r in batch),
        "units": lambda: sorted(key for key, _ in store.iter_stored_units("r1", chunk=2)),
        "payloads": lambda: sorted(row[:2] for row in store.payload_records("r1", ["a", "c"])),
        "sample": lambda: [(r["system"], r["status"]) for r in store.sample_records("r1", "a")[1]],
        "version": lambda: store.run_version("r1")[0],
        "labels": lambda: store.labels("r1"),
        "spans": lambda: list(store.read_spans()),
    }


def test_reads_wait_out_transient_errors_and_explain_permanent_ones(url):
    from tests.core.store.test_writes import disk_full, locked, make_run, result

    store = open_store(url, retry_s=600)
    make_run(store, "r1")
    store.write_units("r1", [result(s, q, "m1") for s in ("s1", "s2") for q in ("a", "b", "c")])
    reads = _reads(store)
    expected = {name: read() for name, read in reads.items()}
    assert len(expected["outputs"]) == 6 and len(expected["units"]) == 6 and len(expected["scores"]) == 6
    dialect = store.engine.dialect.name
    for name, read in reads.items():
        FailingSelects(store.engine, locked(dialect), times=2)  # its first two SELECTs fail
        assert read() == expected[name], name
    assert len(store.healer.recoveries) == len(reads)
    FailingSelects(store.engine, disk_full(dialect), times=1)
    with pytest.raises(StoreUnavailableError, match="disk is full") as stopped:
        store.list_runs()
    assert "\n" not in str(stopped.value) and "SELECT" not in str(stopped.value)
    store.close()
