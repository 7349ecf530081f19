"""kill -9 in the middle of a run: the database stays consistent, and a re-run finishes the work once."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import cli_env, write_project

pytestmark = pytest.mark.slow

N = 60


def count_outputs(db):
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=5)
        return con.execute("select count(*) from outputs").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_kill_minus_9_loses_only_in_flight_work(plugin_site, tmp_path):
    log = tmp_path / "answered.log"
    qa = [
        {"question_id": f"s{i:03d}", "question": f"question number {i}", "reference_answers": [f"number {i}"]}
        for i in range(N)
    ]
    path = write_project(
        tmp_path,
        f"""
        [project]
        concurrency = 2
        [dataset]
        options = {{ path = "qa.jsonl" }}
        [systems.slow]
        rag = {{ name = "example/slow_echo", options = {{ delay_s = 0.05, log = "{log}" }} }}
        [evaluation]
        metrics = ["token_recall", "example/answer_words"]
    """,
        qa=qa,
        docs={},
    )
    db = tmp_path / "ragassay-results.db"
    cmd = [sys.executable, "-m", "ragassay", "run", str(path), "-q"]
    proc = subprocess.Popen(cmd, env=cli_env(plugin_site), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while count_outputs(db) < 10 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"

    con = sqlite3.connect(db)
    assert con.execute("pragma integrity_check").fetchone() == ("ok",)
    stored_first = {r[0] for r in con.execute("select question_id from outputs")}
    assert 10 <= len(stored_first) < N
    # every stored output is complete: both of its metric values are there
    assert con.execute("select count(*) from metric_values").fetchone()[0] == 2 * len(stored_first)
    assert con.execute("select status from runs").fetchone() == ("running",)
    con.close()
    answered_first = log.read_text().split()

    rerun = subprocess.run(cmd, env=cli_env(plugin_site), capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert "resuming run" in rerun.stderr
    con = sqlite3.connect(db)
    rows = con.execute("select question_id from outputs").fetchall()
    assert len(rows) == N and len({r[0] for r in rows}) == N
    assert con.execute("select count(*) from metric_values").fetchone()[0] == 2 * N
    assert con.execute("select status from runs").fetchone() == ("complete",)
    answered_second = log.read_text().split()[len(answered_first) :]
    assert not stored_first & set(answered_second), "completed work was redone"
    lost = len(answered_first) - len(stored_first)
    assert 0 <= lost <= 2 + 2 * 6  # in flight: at most the workers' items plus one flush interval's worth
