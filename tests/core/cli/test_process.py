"""The console script's process policy (ragassay.cli.process): it ends its process without the interpreter's
teardown and loses nothing by it; real subprocesses, their exit codes, full output and the files they leave."""

from __future__ import annotations

import gzip
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from conftest import cli_env, ragassay_cli, write_project

# A process with what an ordinary exit takes care of: an unflushed file, a gzip writer (its trailer is written
# when it is closed), a self-deleting temporary file, an SQLite connection with its changes still in the
# write-ahead log (all alive in globals), an atexit handler, and an object whose __del__ only the interpreter's
# teardown calls. It ends the way the console script does.
SCRIPT = """
import atexit, gzip, sqlite3, sys, tempfile, threading, time
from ragassay.cli.process import end

out = open(sys.argv[1], "w")  # buffered: nothing written to disk yet
out.write("kept\\n" * 1000)
packed = gzip.open(sys.argv[1] + ".gz", "wt")  # text wrapper over a gzip writer over a buffered file
packed.write("line\\n" * 5000)
scratch = tempfile.NamedTemporaryFile(dir=sys.argv[5], delete=True)
scratch.write(b"scratch")
db = sqlite3.connect(sys.argv[2])
db.execute("pragma journal_mode=wal")
db.execute("create table t (x)")
db.execute("insert into t values (42)")
db.commit()
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
    end(exc)
    raise
"""


def _end(tmp_path, mode: str = "", code: str = "5", **env: str) -> subprocess.CompletedProcess:
    script = tmp_path / "ends.py"
    script.write_text(textwrap.dedent(SCRIPT))
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    args = [sys.executable, str(script), str(tmp_path / "out.txt"), str(tmp_path / "db.sqlite"), mode, code]
    return subprocess.run(args + [str(scratch)], capture_output=True, text=True, timeout=60, env=cli_env(**env))


def _files_kept(tmp_path) -> None:
    """The plain file whole, the gzip file whole (a truncated one raises EOFError), the temporary file gone, and
    the committed row in the database file itself (the WAL saved into it and removed)."""
    assert (tmp_path / "out.txt").read_text() == "kept\n" * 1000
    with gzip.open(tmp_path / "out.txt.gz", "rt") as packed:
        assert packed.read() == "line\n" * 5000
    assert list((tmp_path / "scratch").iterdir()) == []
    assert not (tmp_path / "db.sqlite-wal").exists()
    assert sqlite3.connect(tmp_path / "db.sqlite").execute("select x from t").fetchall() == [(42,)]


def test_the_process_ends_without_teardown_after_doing_what_an_exit_must(tmp_path):
    result = _end(tmp_path)
    assert result.returncode == 5, result.stderr
    assert result.stdout == "done\natexit ran\n"  # flushed; the atexit handler ran; __del__ (teardown) did not
    assert result.stderr == ""
    _files_kept(tmp_path)


def test_the_ordinary_exit_on_request(tmp_path):
    result = _end(tmp_path, RAGASSAY_ORDINARY_EXIT="1")
    assert result.returncode == 5, result.stderr
    assert result.stdout.splitlines() == ["done", "atexit ran", "teardown ran"]  # the full teardown
    _files_kept(tmp_path)


def test_a_live_non_daemon_thread_means_the_ordinary_exit(tmp_path):
    result = _end(tmp_path, "thread")
    assert result.returncode == 5, result.stderr
    assert result.stdout.splitlines() == ["done", "thread done", "atexit ran", "teardown ran"]  # the teardown too
    _files_kept(tmp_path)


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


# A plugin that keeps a gzip log and a self-deleting scratch file open for the life of the process, relying on
# the interpreter's teardown to finish them, as plugins do.
PLUGIN = '''
import gzip, os, tempfile
from ragassay import Metric, hookimpl

LOG = gzip.open(os.environ["GZLOG_PATH"], "wt")
SCRATCH = tempfile.NamedTemporaryFile(dir=os.environ["GZLOG_SCRATCH"], delete=True)


class LoggedLength(Metric):
    """Number of characters in the answer; logs every scored answer to a gzip file."""

    name = "logged_length"
    formula = "len(answer)"
    source = "test plugin"

    def score(self, sample, output):
        LOG.write(f"{sample.question_id}\\t{output.answer}\\n")
        SCRATCH.write(b"x")
        return float(len(output.answer))


@hookimpl
def register_metrics(register):
    register(LoggedLength)
'''


@pytest.fixture
def gzip_plugin(tmp_path):
    """The plugin above, installed as a distribution of its own (a module and its ``.dist-info`` with the
    ``ragassay`` entry point) in a folder for ``PYTHONPATH``."""
    site = tmp_path / "site"
    info = site / "gzlog-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "gzlog.py").write_text(PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gzlog\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[ragassay]\ngzlog = gzlog\n")
    return site


@pytest.mark.parametrize("ordinary", ["", "1"])
def test_a_plugins_gzip_log_and_temporary_file_are_finished_at_exit(tmp_path, gzip_plugin, ordinary):
    config = textwrap.dedent(
        """
        [project]
        name = "t"
        [corpus]
        paths = ["corpus/*"]
        [dataset]
        options = { path = "qa.jsonl" }
        [systems.keyword]
        retriever = "keyword"
        generator = "extractive"
        [evaluation]
        metrics = ["gzlog/logged_length"]
        """
    )
    root = write_project(tmp_path / "p", config).parent
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = cli_env(
        gzip_plugin,
        GZLOG_PATH=str(tmp_path / "log.gz"),
        GZLOG_SCRATCH=str(scratch),
        RAGASSAY_PLUGIN_INDEX=str(tmp_path / "index.json"),
        RAGASSAY_ORDINARY_EXIT=ordinary,
    )
    for _ in range(2):  # the second run reads the plugin index and imports the plugin when the metric is scored
        (root / "ragassay-results.db").unlink(missing_ok=True)
        result = ragassay_cli("run", str(root), "-q", env=env, cwd=root)
        assert result.returncode == 0, result.stderr
        with gzip.open(tmp_path / "log.gz", "rt") as log:  # a truncated file raises EOFError here
            assert sorted(line.split("\t")[0] for line in log.read().splitlines()) == ["q1", "q2", "q3"]
        assert list(scratch.iterdir()) == []


def test_an_error_still_exits_2_with_its_message(tmp_path):
    result = ragassay_cli("run", str(tmp_path / "missing.toml"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "missing.toml" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""
