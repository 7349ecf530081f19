"""The streamed work of a run: chunk boundaries change nothing, the dataset is read once, the plan's memory does
not grow with the number of samples."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import tracemalloc

import pytest

from ragassay import DatasetSource, Sample, hookimpl
from ragassay.config import load_config
from ragassay.engine import work as work_module
from ragassay.engine.project import Project
from ragassay.engine.runner import Runner, plan_run
from ragassay.plugin_manager import load_plugins

from conftest import EchoRAG, Testkit, write_project

QA = [
    {
        "question_id": f"q{i}",
        "question": f"What is item {i}?",
        "reference_answers": [f"item {i}"],
        "reference_contexts": [f"Item {i} is a thing."],
    }
    for i in range(11)
]
CONFIG = """
    [project]
    concurrency = 3
    [dataset]
    source = "counted/counted"
    [systems.echo]
    rag = "testkit/echo"
    [systems.twin]
    rag = "testkit/echo"
    [systems.flaky]
    rag = {{ name = "testkit/echo", options = {{ fail_ids = ["q2", "q9"] }} }}
    [evaluation]
    metrics = {metrics}
"""


class CountedSource(DatasetSource):
    """The project's qa.jsonl, counting how often it is read."""

    name = "counted"
    reads = 0

    def samples(self):
        CountedSource.reads += 1
        with self.context.resolve("qa.jsonl").open(encoding="utf-8") as lines:
            for line in lines:
                yield Sample(**json.loads(line))


class Counted:
    @hookimpl
    def register_dataset_sources(self, register):
        register(CountedSource)


@pytest.fixture
def kit():
    EchoRAG.calls = 0
    CountedSource.reads = 0
    return load_plugins([("testkit", Testkit()), ("counted", Counted())])


def run(path, kit, **kwargs):
    loaded = load_config(path)
    store = Project(loaded).open_store()
    try:
        return asyncio.run(Runner(plan_run(loaded, kit.registry), store).run(**kwargs))
    finally:
        store.close()


def stored(root):
    con = sqlite3.connect(root / "ragassay-results.db")
    try:
        return sorted(
            con.execute(
                "select r.fingerprint, o.system, o.question_id, o.status, o.answer, o.reused_from is not null, "
                "m.metric, m.value from outputs o join runs r on r.id = o.run_id "
                "left join metric_values m on m.output_id = o.id"
            )
        )
    finally:
        con.close()


def scenario(root, kit):
    """A run with failures, its resume, then a run with one more metric that reuses the stored outputs."""
    path = write_project(root, CONFIG.format(metrics='["token_recall"]'), qa=QA, docs={})
    first = run(path, kit)
    second = run(path, kit)
    path.write_text(path.read_text().replace('["token_recall"]', '["token_recall", "exact_match"]'))
    third = run(path, kit)
    counts = [(s.units, s.skipped, s.completed, s.failed, s.reused) for s in (first, second, third)]
    return counts, EchoRAG.calls, CountedSource.reads, stored(root)


def test_chunks_of_two_samples_store_what_one_chunk_stores(tmp_path, kit, monkeypatch):
    whole = scenario(tmp_path / "whole", kit)
    EchoRAG.calls = CountedSource.reads = 0
    monkeypatch.setattr(work_module, "CHUNK", 2)  # 11 samples: six chunks, the last one short
    chunked = scenario(tmp_path / "chunked", kit)
    assert chunked == whole
    counts, calls, reads, _ = chunked
    assert counts == [
        (33, 0, 33, 2, 0),  # echo and twin share one output per sample: 11 + 11 answers
        (33, 31, 2, 2, 0),  # the resume redoes only the two failed units
        (33, 0, 33, 2, 31),  # one more metric, a new run: every ok output is copied, the failures are redone
    ]
    assert calls == 11 + 11 + 2 + 2 and reads == 3  # the dataset source is read once per run


def test_the_plan_and_its_work_stream_hold_no_more_memory_for_more_samples(tmp_path, kit, monkeypatch):
    monkeypatch.setattr("ragassay.seen.IN_MEMORY", 500)  # unique-id checks spill to a file early
    monkeypatch.setattr("ragassay.seen.BATCH", 500)
    monkeypatch.setattr("ragassay.engine.spool._BLOCK", 1 << 16)  # both sizes read the spool in full blocks

    def peak(samples: int) -> int:
        root = tmp_path / str(samples)
        # ids and questions longer than 64 characters: pydantic's cache of short strings stays out of the figure
        qa = [
            {**QA[1], "question_id": f"{'sample-' * 9}{i:06d}", "question": f"{'What is the item ' * 4}{i}?"}
            for i in range(samples)
        ]
        loaded = load_config(write_project(root, CONFIG.format(metrics='["token_recall"]'), qa=qa, docs={}))
        del qa
        store = Project(loaded).open_store()
        tracemalloc.start()
        try:
            plan = plan_run(loaded, kit.registry)
            runner = Runner(plan, store)
            run_id, _ = runner.open_run()
            assert sum(len(item.units) for item in runner.work(run_id).items()) == 3 * samples
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            store.close()

    small, large = peak(4_000), peak(20_000)
    # holding the samples or their work items costs over 2 KiB each: 16,000 more would be 32 MiB more
    assert large - small < 1024 * 1024, (small, large)


class Refusing:
    """An executor that must not be used."""

    def map(self, fn, items):
        raise AssertionError("a complete run asked its executor for work")


def test_a_complete_run_starts_no_executor(tmp_path, kit):
    path = write_project(tmp_path, CONFIG.format(metrics='["token_recall"]').replace(', "q9"', ""), qa=QA, docs={})
    first = run(path, kit)
    assert first.failed == 1
    path.write_text(path.read_text().replace('fail_ids = ["q2"]', "fail_ids = []"))
    loaded = load_config(path)
    store = Project(loaded).open_store()
    try:
        again = asyncio.run(Runner(plan_run(loaded, kit.registry), store).run())  # a new fingerprint: the fix
        assert again.failed == 0
        done = asyncio.run(Runner(plan_run(loaded, kit.registry), store, executor=Refusing()).run())
    finally:
        store.close()
    assert done.resumed and (done.units, done.skipped, done.completed) == (33, 33, 0)
