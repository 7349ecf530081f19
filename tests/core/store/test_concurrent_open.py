"""Several processes opening one new results file at the same moment: each one migrates it or sees it migrated."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow

OPEN_AT = """
import sys, time
from ragassay.store import open_store
start = float(sys.argv[2])
while time.time() < start:
    time.sleep(0.001)
open_store("sqlite:///" + sys.argv[1]).close()
"""


@pytest.mark.parametrize("round_", [1, 2])
def test_processes_opening_a_new_results_file_at_once_all_succeed(tmp_path, round_):
    db = tmp_path / "results.db"
    start = time.time() + 3.0  # after every process has imported ragassay
    procs = [
        subprocess.Popen([sys.executable, "-c", OPEN_AT, str(db), str(start)], stderr=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, "\n".join(e for e in errors if e)
    con = sqlite3.connect(db)
    from ragassay.store import SCHEMA_VERSION

    assert con.execute("select version from schema_version").fetchall() == [(SCHEMA_VERSION,)]


OPEN_URL_AT = OPEN_AT.replace('"sqlite:///" + sys.argv[1]', "sys.argv[1]")


def test_processes_opening_a_new_postgresql_database_at_once_all_succeed(postgres_url):
    start = time.time() + 3.0
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_URL_AT, postgres_url, str(start)], stderr=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, "\n".join(e for e in errors if e)
    from sqlalchemy import create_engine, text

    from ragassay.store import SCHEMA_VERSION

    engine = create_engine(postgres_url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version FROM schema_version")).all() == [(SCHEMA_VERSION,)]
    engine.dispose()
