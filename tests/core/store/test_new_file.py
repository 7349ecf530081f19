"""A run into a results file that does not exist yet (ragassay.store.new_file): its first calls go out before the
file is opened, and everything it stores, its lease and its errors are as with the file opened first.

The runs are real (``ragassay.api.run`` on a project on disk); the RAG system is an in-process plugin whose
answer calls the test's ``on_call`` (what "another process" does in between, or what the file looked like then).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading

import pytest

from ragassay import RAGOutput, RAGSystem, hookimpl
from ragassay.api import run
from ragassay.engine.project import Project
from ragassay.engine.runner import plan_run
from ragassay.errors import LeaseHeldError, StoreError
from ragassay.plugin_manager import load_plugins
from ragassay.reference_rags.baselines import NoRetrievalRAG
from ragassay.store import open_store, store_url
from ragassay.store.lease import acquire
from ragassay.store.new_file import NewResultsFile, claim_new_file

from conftest import write_project

QA = [{"question_id": f"q{i:02d}", "question": f"Question {i}?", "reference_answers": [f"a{i}"]} for i in range(12)]
CONFIG = """
    [project]
    name = "n"
    concurrency = 4

    [dataset]
    options = { path = "qa.jsonl" }

    [systems.probe]
    rag = "t/probe"

    [evaluation]
    metrics = ["exact_match"]
"""


class Probe(RAGSystem):
    """Answers each sample's reference; calls ``Probe.on_call(n)`` first (n: the calls so far, from 1)."""

    name = "probe"
    retrieval = "never"
    calls = 0
    on_call = staticmethod(lambda n: None)

    async def answer(self, sample):
        type(self).calls += 1
        type(self).on_call(type(self).calls)
        await asyncio.sleep(0.01)
        return RAGOutput(answer=sample.reference_answers[0])


class ProbeLLM(NoRetrievalRAG):
    """The ``no_retrieval`` baseline (its generator answers), calling ``Probe.on_call(n)`` first."""

    name = "probe_llm"

    async def answer(self, sample):
        Probe.calls += 1
        Probe.on_call(Probe.calls)
        return await super().answer(sample)


class Plugin:
    @hookimpl
    def register_rags(self, register):
        register(Probe)
        register(ProbeLLM)


@pytest.fixture
def project(tmp_path):
    Probe.calls, Probe.on_call = 0, staticmethod(lambda n: None)
    return write_project(tmp_path, CONFIG, qa=QA, docs={})


def results(config) -> contextlib.closing[sqlite3.Connection]:
    """The project's results file, read with the stdlib (closed after the ``with``)."""
    return contextlib.closing(sqlite3.connect(config.parent / "ragassay-results.db"))


def fingerprint(config) -> str:
    return plan_run(Project.load(config, load_plugins([("t", Plugin())]).registry)).fingerprint()


def test_the_first_call_goes_out_before_the_new_file_is_opened_and_everything_is_stored(project):
    db = project.parent / "ragassay-results.db"
    seen = []
    Probe.on_call = staticmethod(lambda n: seen.append(db.stat().st_size) if n == 1 else None)
    summary = run(project, plugins=[("t", Plugin())])
    assert seen == [0]  # claimed (created empty), not yet opened: no schema, no run, no lease
    assert summary.completed == len(QA) and summary.failed == 0
    with results(project) as con:
        assert con.execute("select status from runs").fetchall() == [("complete",)]
        assert con.execute("select count(*) from outputs").fetchone() == (len(QA),)
        assert con.execute("select count(*) from run_samples").fetchone() == (len(QA),)
        assert con.execute("select count(*) from run_leases").fetchone() == (0,)
    again = run(project, plugins=[("t", Plugin())])  # the file exists now: opened first, as always
    assert again.run_id == summary.run_id and again.skipped == len(QA) and Probe.calls == len(QA)


def test_another_process_that_takes_the_lease_first_wins_and_this_one_refuses(project):
    db_url = store_url("ragassay-results.db", project.parent)
    key = fingerprint(project)
    other = {}

    def take_the_lease(n):
        if n == 1:  # "another process" opens the new file and takes this config's lease in between
            other["store"] = open_store(db_url)
            other["lease"] = acquire(other["store"].engine, key)

    Probe.on_call = staticmethod(take_the_lease)
    try:
        with pytest.raises(LeaseHeldError, match="already being run by") as raised:
            run(project, plugins=[("t", Plugin())])
        assert type(raised.value) is LeaseHeldError  # the ordinary refusal, after the new file was given up
        with results(project) as con:
            assert con.execute("select count(*) from runs").fetchone() == (0,)
            assert con.execute("select count(*) from outputs").fetchone() == (0,)
        assert Probe.calls >= 1  # made before the first write found the lease taken: dropped
    finally:
        other["lease"].release()
        other["store"].close()


LLM_CONFIG = """
    [project]
    name = "n"
    concurrency = 4

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [llm]
    cache = false

    [systems.model]
    rag = "t/probe_llm"
    generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1" }} }}

    [evaluation]
    metrics = ["exact_match"]
"""


def test_waiting_for_the_other_process_counts_the_dropped_calls_against_the_budget(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    from tests.servers.openai_chat import OpenAIChatServer, Turn

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-new-file")
    other = {}

    def take_the_lease_for_a_moment(n):
        if n == 1:  # "another process" opens the new file and holds this config's lease for a moment
            other["store"] = open_store(store_url("ragassay-results.db", tmp_path))
            other["lease"] = acquire(other["store"].engine, key)

            def release():
                other["lease"].release()
                other["store"].close()

            threading.Timer(0.5, release).start()

    waited = []
    Probe.calls, Probe.on_call = 0, staticmethod(take_the_lease_for_a_moment)
    reply = Turn(text="a1", usage=(20, 2, 0))
    with OpenAIChatServer(default=lambda request: reply) as server:
        config = write_project(tmp_path, LLM_CONFIG.format(url=server.url), qa=QA, docs={})
        key = fingerprint(config)
        budget = len(QA) + 4
        summary = run(config, plugins=[("t", Plugin())], wait=True, on_wait=waited.append, budget={"calls": budget})
        calls = len(server.requests)
    dropped = calls - summary.completed
    assert len(waited) == 1 and dropped >= 1
    # the session's budget covers every call made, the dropped ones included: no more calls than it allows
    assert calls == budget and summary.summary.budget_limited and summary.completed == budget - dropped
    with results(config) as con:
        assert con.execute("select status from runs").fetchall() == [("budget-limited",)]
        assert con.execute("select count(*) from outputs").fetchone() == (summary.completed,)


def test_a_file_that_cannot_be_opened_is_the_usual_error_and_nothing_hangs(project):
    db = project.parent / "ragassay-results.db"

    def spoil(n):
        if n == 1:
            db.write_bytes(b"this is not a database" * 100)

    Probe.on_call = staticmethod(spoil)
    with pytest.raises(StoreError, match="ragassay-results.db"):
        run(project, plugins=[("t", Plugin())])


def test_a_run_stopped_before_its_first_call_is_recorded_as_with_the_file_opened_first(project):
    def stop(summary):
        raise RuntimeError("stopped by the caller")

    with pytest.raises(RuntimeError, match="stopped by the caller"):
        run(project, plugins=[("t", Plugin())], on_start=stop)
    assert Probe.calls == 0
    with results(project) as con:
        assert con.execute("select count(*) from runs").fetchone() == (1,)
        assert con.execute("select count(*) from run_leases").fetchone() == (0,)


def test_a_preparation_that_holds_the_loop_still_gets_the_lease_while_it_holds_it(project, monkeypatch):
    import time

    from ragassay.engine.runner import Runner

    leases = []
    build = Runner._build_systems

    def slow_build(self, names):  # a system built synchronously on the loop (an index, say) until the lease is seen
        deadline = time.monotonic() + 60  # a hang guard, never reached in a passing test
        while time.monotonic() < deadline and not leases:
            time.sleep(0.05)
            with results(project) as con:
                tables = {row[0] for row in con.execute("select name from sqlite_master")}
                if "run_leases" in tables:
                    leases.extend(con.execute("select key from run_leases").fetchall())
        return build(self, names)

    monkeypatch.setattr(Runner, "_build_systems", slow_build)
    summary = run(project, plugins=[("t", Plugin())])
    assert leases == [(fingerprint(project),)] and summary.completed == len(QA)


def test_only_a_new_plain_sqlite_file_in_an_existing_folder_is_claimed(tmp_path, monkeypatch):
    new = claim_new_file(f"sqlite:///{tmp_path}/r.db", key="[project] results", retry_s=1)
    assert isinstance(new, NewResultsFile) and (tmp_path / "r.db").stat().st_size == 0
    assert new.find_run("f") is None and not new.has_outputs("r") and not new.has_reusable("r", ["k"])
    new.close()  # never opened: the empty file goes
    new.close()  # once only
    assert not (tmp_path / "r.db").exists()
    (tmp_path / "there.db").write_bytes(b"")
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    assert claim_new_file("sqlite:///${RESULTS_DIR}/v.db", key="k", retry_s=1) is not None
    for url in (
        f"sqlite:///{tmp_path}/there.db",  # exists, even empty
        f"sqlite:///{tmp_path}/missing/r.db",  # no folder
        f"sqlite:///{tmp_path}/q.db?timeout=5",  # options: the ordinary opening
        "sqlite:///:memory:",
        "postgresql+psycopg://u@127.0.0.1:1/db",
    ):
        assert claim_new_file(url, key="k", retry_s=1) is None, url
    assert not (tmp_path / "q.db").exists()
