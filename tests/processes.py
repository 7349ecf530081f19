"""Helpers for tests that start real ``ragassay run`` processes on a small project (slow_echo answers)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

from conftest import cli_env, write_project

N = 30


def slow_project(root, delay_s=0.1, name="ragassay.toml", log=None):
    qa = [
        {"question_id": f"s{i:03d}", "question": f"question number {i}", "reference_answers": [f"number {i}"]}
        for i in range(N)
    ]
    log_option = f', log = "{log}"' if log else ""
    path = write_project(
        root,
        f"""
        [project]
        concurrency = 2
        [dataset]
        options = {{ path = "qa.jsonl" }}
        [systems.slow]
        rag = {{ name = "example/slow_echo", options = {{ delay_s = {delay_s}{log_option} }} }}
        [evaluation]
        metrics = ["token_recall"]
    """,
        qa=qa,
        docs={},
    )
    if name != "ragassay.toml":
        path = path.rename(path.with_name(name))
    return path


def start_run(config, plugin_site, *args):
    return subprocess.Popen(
        [sys.executable, "-m", "ragassay", "run", str(config), "-q", *args],
        env=cli_env(plugin_site),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def scalar(db, sql):
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=5)
        try:
            return con.execute(sql).fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def wait_for_outputs(db, proc, at_least, timeout=60):
    deadline = time.time() + timeout
    while scalar(db, "select count(*) from outputs") < at_least and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the first run ended before the test could overlap it"


def wait_for_text(path, text, proc, timeout=60):
    """Wait until ``text`` appears in the file ``path`` (while ``proc`` runs)."""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if path.exists() and text in path.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared in {path.name}")


def lease_count(db):
    """Rows in ``run_leases`` (the table must exist: no leniency here)."""
    con = sqlite3.connect(db, timeout=10)
    try:
        return con.execute("select count(*) from run_leases").fetchone()[0]
    finally:
        con.close()
