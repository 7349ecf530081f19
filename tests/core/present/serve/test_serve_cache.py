"""The run cache of ``ragassay serve`` over a real SQLite store: an unchanged run is read once and then only its
version is asked (statements counted by a SQLAlchemy event on the store's engine), and every kind of write to
the run (new outputs, a value added to a stored output, a value rewritten in place, a status, a lease) shows on
the next request."""

from __future__ import annotations

import contextlib
import re
import threading

import pytest
from sqlalchemy import event

from ragassay.models import MetricValue, RAGOutput, Sample
from ragassay.present.serve.cache import RunEntry
from ragassay.store.database import UnitResult

from html_report_helpers import write_planted_run
from serve_helpers import client

RUN = "/runs/planted-run-0001"


@contextlib.contextmanager
def statements(store):
    """The SQL statements the store runs inside the block."""
    seen: list[str] = []

    def record(conn, cursor, statement, *args):
        seen.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(store.engine, "before_cursor_execute", record)


@pytest.fixture
def planted(tmp_path):
    store, _ = write_planted_run(tmp_path / "results.db")
    yield store
    store.close()


def test_an_unchanged_run_is_read_once_then_only_its_version_is_asked(planted):
    web = client(planted)
    with statements(planted) as first:
        assert web.get(RUN).status_code == 200
    assert sum("FROM run_samples" in s for s in first) == 1 and len(first) >= 6  # the whole run, once
    pages = [f"{RUN}/cost", f"{RUN}/failures", f"{RUN}/failures?metric=token_recall&below=0.5"]
    for path in [RUN, *pages, *pages]:  # first and second loads of every page: the kept run, nothing read
        with statements(planted) as seen:
            assert web.get(path).status_code == 200, path
        assert len(seen) == 1 and "FROM runs" in seen[0] and "run_samples" not in seen[0], (path, seen)
    with statements(planted) as seen:  # a text search reads the stored outputs once, then is kept
        web.get(f"{RUN}/failures", params={"q": "answer 3"})
        web.get(f"{RUN}/failures", params={"q": "answer 3"})
    assert len(seen) == 3 and sum("output_json" in s for s in seen) == 1
    with statements(planted) as seen:  # the sample page reads only its sample: no run_samples scan
        assert web.get(f"{RUN}/samples/q03").status_code == 200
    assert not any("FROM run_samples" in s and "question_id =" not in s for s in seen)


RUN_ID = "growing-run"
SAMPLES = [Sample(question_id=f"q{i:02d}", question=f"Question {i}?", reference_answers=["a"]) for i in range(4)]


@pytest.fixture
def growing(tmp_path):
    from ragassay.store import open_store, store_url

    store = open_store(store_url(str(tmp_path / "r.db"), tmp_path))
    row = {"id": RUN_ID, "fingerprint": "g", "project": "p", "config_path": "x", "config_json": "{}"}
    row.update(spec_json='{"metrics": {"token_recall": {}}}', ragassay_version="0", sample_count=len(SAMPLES))
    store.create_run(row, [("base", "{}")], SAMPLES)
    yield store
    store.close()


def _unit(index: int, value: float) -> UnitResult:
    output = RAGOutput(answer=f"answer {index}", contexts=[], latency_s=0.1)
    metrics = [MetricValue(metric="token_recall", value=value)]
    return UnitResult("base", SAMPLES[index].question_id, "ok", output, metrics=metrics)


def _below(web, threshold: float) -> int:
    page = web.get(f"/runs/{RUN_ID}/failures", params={"metric": "token_recall", "below": str(threshold)}).text
    return int(re.search(r'id="failure-count">(\d+) of', page).group(1))


def _state(web) -> str:
    return re.search(r"state (\w+)", web.get(f"/runs/{RUN_ID}/failures").text).group(1)


def test_every_write_to_the_run_shows_on_the_next_request(growing):
    store, web = growing, client(growing)
    store.write_units(RUN_ID, [_unit(0, 0.5)])
    assert _below(web, 0.6) == 1 and _below(web, 0.6) == 1  # the second load from the cache
    store.write_units(RUN_ID, [_unit(1, 0.1), _unit(2, 0.8)])  # new outputs
    assert _below(web, 0.6) == 2
    output_id = store.stored_units(RUN_ID)[("base", "q02")].output_id
    added = UnitResult("base", "q02", "ok", output_id=output_id, metrics=[MetricValue(metric="extra", value=1.0)])
    store.write_units(RUN_ID, [added])  # a value added to a stored output (no new output)
    assert "extra" in web.get(f"/runs/{RUN_ID}/failures").text
    output_id = store.stored_units(RUN_ID)[("base", "q00")].output_id
    rewritten = UnitResult(
        "base", "q00", "ok", output_id=output_id, metrics=[MetricValue(metric="token_recall", value=0.9)]
    )
    before = store.run_version(RUN_ID)[1]
    store.write_units(RUN_ID, [rewritten], replace_existing=True)  # same rows counted: only updated_at moves
    assert store.run_version(RUN_ID)[1][3:7] == before[3:7]
    assert _below(web, 0.6) == 1
    store.write_units(RUN_ID, [_unit(3, 0.95)])
    assert _state(web) == "interrupted"
    store.set_run_status(RUN_ID, "complete")  # a status change
    assert _state(web) == "complete"
    with store.lease("g") as lease:  # a process taking the run (a resume) ...
        lease.attach(RUN_ID)
        assert _state(web) == "running"
    assert _state(web) == "complete"  # ... and letting it go


def test_a_kept_value_is_computed_once_by_concurrent_requests():
    entry, calls, barrier = RunEntry(store=None, run_id="r", version=(1,)), [], threading.Barrier(8)

    def compute():
        calls.append(1)
        return object()

    found = []

    def request():
        barrier.wait()
        found.append(entry.get("page", compute))

    threads = [threading.Thread(target=request) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len({id(value) for value in found}) == 1
