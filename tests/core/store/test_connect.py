"""Opening a results file that cannot be written: read-only commands read it, writers get one clear line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragassay.errors import StoreError, StoreUnavailableError
from ragassay.models import RAGOutput, Sample
from ragassay.results import read_run
from ragassay.store import open_store, store_url
from ragassay.store.database import UnitResult

from mounts import can_make_read_only, read_only

needs_read_only = pytest.mark.skipif(not can_make_read_only(), reason="cannot make a folder read-only here")


def stored_run(folder, answers=("a", "b")) -> str:
    """A results file in ``folder`` with one run and an output per answer; returns its URL."""
    url = store_url("results.db", folder)
    store = open_store(url)
    store.create_run(
        {
            "id": "r1",
            "fingerprint": "f",
            "project": "p",
            "config_path": "x",
            "config_json": "{}",
            "spec_json": "{}",
            "ragassay_version": "0",
            "sample_count": len(answers),
        },
        [("sys", "{}")],
        [Sample(question_id=q, question=q) for q in answers],
    )
    store.write_units("r1", [UnitResult("sys", q, "ok", RAGOutput(answer=q)) for q in answers])
    store.close()
    return url


@needs_read_only
def test_a_read_only_results_file_is_read_and_never_written(tmp_path):
    url = stored_run(tmp_path / "db")
    with read_only(tmp_path / "db"):
        store = open_store(url, create=False)
        assert [r["outputs"] for r in store.list_runs()] == [2]
        assert sorted(q for _, q in read_run(store, "r1").outputs) == ["a", "b"]
        with pytest.raises(StoreUnavailableError):
            store.set_run_status("r1", "complete")
        store.close()
        with pytest.raises(StoreUnavailableError) as refused:
            open_store(url)  # a run needs to write
    message = str(refused.value)
    assert message.startswith(f"results database {tmp_path / 'db' / 'results.db'}: ")
    assert "read-only" in message and "writable" in message and "\n" not in message


@needs_read_only
def test_changes_left_in_the_wal_of_a_killed_writer_are_read_in_a_read_only_folder(tmp_path):
    """A writer killed before a checkpoint leaves its last commits in the ``-wal`` file: a reader of the
    read-only folder sees them (it must not open the file as immutable and miss them)."""
    url = stored_run(tmp_path / "db", answers=("a",))
    writer = (
        "import os, sys\n"
        "from ragassay.models import RAGOutput\n"
        "from ragassay.store import open_store\n"
        "from ragassay.store.database import UnitResult\n"
        "store = open_store(sys.argv[1])\n"
        "with store.engine.connect() as conn:\n"
        "    conn.exec_driver_sql('PRAGMA wal_autocheckpoint=0')\n"
        "store.write_units('r1', [UnitResult('sys', 'late', 'ok', RAGOutput(answer='late'))])\n"
        "os._exit(0)  # like kill -9: no checkpoint, the -wal file stays\n"
    )
    subprocess.run([sys.executable, "-c", writer, url], check=True, timeout=120)
    assert (tmp_path / "db" / "results.db-wal").stat().st_size > 0
    with read_only(tmp_path / "db"):
        store = open_store(url, create=False)
        assert sorted(q for _, q in read_run(store, "r1").outputs) == ["a", "late"]
        store.close()


@needs_read_only
def test_a_wal_that_cannot_be_read_without_writing_is_explained(tmp_path):
    url = stored_run(tmp_path / "db")
    (tmp_path / "db" / "results.db-shm").unlink(missing_ok=True)
    (tmp_path / "db" / "results.db-wal").write_bytes(b"\0" * 64)  # changes SQLite would need a -shm file for
    with read_only(tmp_path / "db"), pytest.raises(StoreError, match="read-only folder.*results.db-shm"):
        open_store(url, create=False)


def test_a_results_path_that_cannot_be_created_is_one_line(tmp_path):
    with pytest.raises(StoreUnavailableError) as refused:
        open_store("sqlite:////proc/nope/results.db")
    message = str(refused.value)
    assert message.startswith("results database /proc/nope/results.db: its folder /proc/nope cannot be created")
    assert "[project] results" in message and "\n" not in message


def test_a_readable_file_opened_for_reading_keeps_working_normally(tmp_path):
    url = stored_run(tmp_path)
    store = open_store(url, create=False)
    store.set_run_status("r1", "complete")  # writable: not opened read-only
    assert store.get_run("r1")["status"] == "complete"
    store.close()
