"""Run leases on a real SQLite results file and a real PostgreSQL database: atomic acquisition, staleness, takeover, run states."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import insert, select

from ragassay.store import open_store
from ragassay.store.lease import Holder, LeaseHeldError, acquire, run_state, stale_reason
from ragassay.store.schema import run_leases


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    url = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    store = open_store(url or f"sqlite:///{tmp_path / 'results.db'}")
    yield store
    store.close()


def rows(store):
    with store.engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(select(run_leases))]


def put_holder(store, **values):
    row = {
        "key": "fp",
        "owner": "someone",
        "host": socket.gethostname(),
        "pid": 1,
        "acquired_at": time.time(),
        "heartbeat_at": time.time(),
        "run_id": None,
        **values,
    }
    with store.engine.begin() as conn:
        conn.execute(insert(run_leases).values(**row))


def test_a_held_lease_refuses_a_second_holder_with_who_and_what_to_do(store):
    with acquire(store.engine, "fp") as lease:
        lease.attach("run1")
        with pytest.raises(LeaseHeldError) as info:
            acquire(store.engine, "fp")
        message = str(info.value)
        assert f"pid {lease.holder.pid} on {socket.gethostname()}" in message and "--wait" in message
        assert "\n" not in message
        with acquire(store.engine, "other config"):  # another key is independent
            assert len(rows(store)) == 2
    assert rows(store) == []  # released on exit


def test_only_one_of_many_concurrent_acquirers_wins(store):
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def contend():
        barrier.wait()
        try:
            acquire(store.engine, "fp", heartbeat_s=60)
            outcomes.append("won")
        except LeaseHeldError:
            outcomes.append("refused")

    threads = [threading.Thread(target=contend) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused"] * 5 + ["won"]


def test_a_dead_local_process_lease_is_taken_over_with_a_note(store):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    put_holder(store, pid=int(dead.stdout), run_id="old")
    with acquire(store.engine, "fp") as lease:
        assert len(lease.notes) == 1 and f"process {dead.stdout.strip()}" in lease.notes[0]
        assert rows(store)[0]["owner"] == lease.holder.owner and rows(store)[0]["run_id"] is None


def test_a_silent_remote_lease_is_stale_but_a_beating_one_is_not(store):
    put_holder(store, host="elsewhere.example", pid=4242, heartbeat_at=time.time() - 3600)
    with acquire(store.engine, "fp", stale_after_s=60) as lease:
        assert "no heartbeat for" in lease.notes[0]
    put_holder(store, host="elsewhere.example", pid=4242)
    with pytest.raises(LeaseHeldError, match="pid 4242 on elsewhere.example"):
        acquire(store.engine, "fp", stale_after_s=60)


def test_heartbeat_refreshes_the_row_and_notices_a_takeover(store):
    with acquire(store.engine, "fp", heartbeat_s=0.05) as lease:
        first = rows(store)[0]["heartbeat_at"]
        time.sleep(0.3)
        assert rows(store)[0]["heartbeat_at"] > first
        with store.engine.begin() as conn:
            conn.execute(run_leases.update().values(owner="thief"))
        assert lease.heartbeat() is False and "took this run's lease over" in lease.lost
    assert rows(store)[0]["owner"] == "thief"  # release never deletes another holder's lease


def test_wait_polls_until_the_holder_releases(store):
    first = acquire(store.engine, "fp")
    seen: list[Holder] = []
    threading.Timer(0.4, first.release).start()
    started = time.perf_counter()
    with acquire(store.engine, "fp", wait=True, on_wait=seen.append, poll_s=0.05):
        assert time.perf_counter() - started >= 0.3
    assert [h.pid for h in seen] == [first.holder.pid]


def test_run_state_comes_from_the_lease_not_the_status_column():
    run = {"status": "running", "systems": 2, "sample_count": 3, "outputs": 4}
    holder = Holder("fp", "o", "box", 77, 0.0, time.time(), "r")
    assert run_state(run, holder) == ("running", "pid 77 on box")
    assert run_state(run, None) == ("interrupted", "run again to resume")
    assert run_state({**run, "status": "complete", "outputs": 6}, None) == ("complete", "")
    assert stale_reason(holder) is None


def test_list_runs_shows_running_and_interrupted_states(store, tmp_path):
    from ragassay.models import Sample

    sample = Sample(question_id="q1", question="?")
    for run_id in ("live", "dead"):
        store.create_run(
            {
                "id": run_id,
                "fingerprint": f"fp-{run_id}",
                "project": "p",
                "config_path": "c",
                "config_json": "{}",
                "spec_json": "{}",
                "ragassay_version": "0",
                "sample_count": 1,
            },
            [("s", "{}")],
            [sample],
        )
    with acquire(store.engine, "fp-live") as lease:
        lease.attach("live")
        states = {r["id"]: (r["state"], r["state_detail"]) for r in store.list_runs()}
    assert states["live"] == ("running", f"pid {lease.holder.pid} on {socket.gethostname()}")
    assert states["dead"] == ("interrupted", "run again to resume")


def test_a_lease_whose_insert_committed_unheard_is_ours_after_the_retry(store):
    """The connection drops after the lease INSERT committed: the retried INSERT conflicts with our own row,
    which is recognised as ours (not 'already being run by' this very process)."""
    import sqlite3

    import psycopg
    from sqlalchemy import event

    state = {"done": False}
    lost = (
        sqlite3.OperationalError("database is locked")
        if store.engine.dialect.name == "sqlite"
        else psycopg.OperationalError("server closed the connection unexpectedly")
    )

    def commit_then_lose_it(conn) -> None:  # noqa: ANN001
        if not state["done"]:
            state["done"] = True
            conn.connection.dbapi_connection.commit()
            raise lost

    event.listen(store.engine, "commit", commit_then_lose_it)
    with acquire(store.engine, "fp", healer=store.healer) as lease:
        assert state["done"] and [r["owner"] for r in rows(store)] == [lease.holder.owner]
    assert rows(store) == []
