"""The console script ends its process without the interpreter's teardown, and loses nothing by it
(ragassay.cli.process_exit): real subprocesses, their exit codes, full output and the files they leave."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

from conftest import ragassay_cli

# A process with what an ordinary exit takes care of: an unflushed file and an SQLite connection with its
# changes still in the write-ahead log (both alive in globals), an atexit handler, and an object whose
# __del__ only the interpreter's teardown calls. It ends the way the console script does.
SCRIPT = """
import atexit, gc, sqlite3, sys, threading, time
from ragassay.cli.process_exit import end_process, ordinary_exit

out = open(sys.argv[1], "w")  # buffered: nothing written to disk yet
out.write("kept\\n" * 1000)
db = sqlite3.connect(sys.argv[2])
db.execute("pragma journal_mode=wal")
db.execute("create table t (x)")
db.execute("insert into t values (42)")
db.commit()
gc.freeze()  # as `ragassay run` does (ragassay.collector): frozen objects are not in gc.get_objects()
atexit.register(lambda: print("atexit ran", flush=True))

class Torn:
    def __del__(self):
        print("teardown ran", flush=True)

torn = Torn()
if sys.argv[3] == "thread":  # a non-daemon thread still working: the ordinary exit waits for it
    threading.Thread(target=lambda: (time.sleep(0.2), print("thread done", flush=True))).start()
print("done")  # stdout is a pipe: buffered until flushed
try:
    raise SystemExit(eval(sys.argv[4]))
except SystemExit as exc:
    end_process(exc)
    raise
finally:
    ordinary_exit()  # as ragassay.cli.main.main
"""


def _end(tmp_path, mode: str = "", code: str = "5") -> subprocess.CompletedProcess:
    script = tmp_path / "ends.py"
    script.write_text(textwrap.dedent(SCRIPT))
    args = [sys.executable, str(script), str(tmp_path / "out.txt"), str(tmp_path / "db.sqlite"), mode, code]
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def _db_kept(tmp_path) -> bool:
    """The committed row is in the database file itself (the WAL was saved into it and removed)."""
    wal = tmp_path / "db.sqlite-wal"
    return not wal.exists() and sqlite3.connect(tmp_path / "db.sqlite").execute("select x from t").fetchall() == [(42,)]


def test_the_process_ends_without_teardown_after_doing_what_an_exit_must(tmp_path):
    result = _end(tmp_path)
    assert result.returncode == 5, result.stderr
    assert result.stdout == "done\natexit ran\n"  # flushed; the atexit handler ran; __del__ (teardown) did not
    assert result.stderr == ""
    assert (tmp_path / "out.txt").read_text() == "kept\n" * 1000
    assert _db_kept(tmp_path)


def test_a_live_non_daemon_thread_means_the_ordinary_exit(tmp_path):
    result = _end(tmp_path, "thread")
    assert result.returncode == 5, result.stderr
    assert result.stdout.splitlines() == ["done", "thread done", "atexit ran", "teardown ran"]  # the teardown too
    assert (tmp_path / "out.txt").read_text() == "kept\n" * 1000
    assert _db_kept(tmp_path)


def test_an_exit_with_a_message_is_left_to_the_interpreter(tmp_path):
    result = _end(tmp_path, code="'stopped: a message'")
    assert result.returncode == 1
    assert result.stderr == "stopped: a message\n"
    assert "teardown ran" in result.stdout


def test_a_real_run_keeps_its_output_and_results(project):
    result = ragassay_cli("run", str(project), cwd=project.parent)
    assert result.returncode == 0, result.stderr
    assert "6 units done" in result.stderr and result.stderr.rstrip().endswith("0 failed, 0 metric errors")
    assert result.stdout.rstrip().endswith("k_precision, exact_match, context_mrr, recall_at_k.")  # all of it
    db = project.parent / "ragassay-results.db"
    assert not db.with_name(db.name + "-wal").exists()
    with sqlite3.connect(db) as conn:
        assert conn.execute("select status from runs").fetchall() == [("complete",)]
        assert conn.execute("select count(*) from outputs").fetchone() == (6,)
        assert conn.execute("select count(*) from judgements").fetchone() == (6,)
        assert conn.execute("select count(*) from metric_values").fetchone() == (36,)


def test_an_error_still_exits_2_with_its_message(tmp_path):
    result = ragassay_cli("run", str(tmp_path / "missing.toml"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "missing.toml" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""
