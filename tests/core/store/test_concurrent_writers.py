"""Several processes writing into one results database at once, with overlapping units: no row lost, none twice."""

from __future__ import annotations

import multiprocessing
import time

import pytest
from sqlalchemy import create_engine, text

from ragassay.results import read_run
from ragassay.store import open_store, store_url

from store_hammer import METRICS, QUESTIONS, RUNS, SHARED, SYSTEMS, contexts_of, create_runs, write_share

pytestmark = pytest.mark.slow


WRITERS = 6


@pytest.fixture(params=["postgresql", "sqlite"])
def hammered_url(request, tmp_path):
    if request.param == "sqlite":
        return store_url("results.db", tmp_path)
    return request.getfixturevalue("postgres_url")


def count(conn, sql):
    return conn.execute(text(sql)).scalar()


def test_concurrent_writers_of_two_runs_store_every_unit_exactly_once(hammered_url):
    create_runs(hammered_url)
    spawn = multiprocessing.get_context("spawn")
    start_at = time.time() + 4.0  # after every writer has imported ragassay
    writers = [spawn.Process(target=write_share, args=(hammered_url, w, WRITERS, start_at)) for w in range(WRITERS)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(timeout=240)
    assert [p.exitcode for p in writers] == [0] * WRITERS
    units = len(RUNS) * len(SYSTEMS) * len(QUESTIONS)
    engine = create_engine(hammered_url)
    with engine.connect() as conn:
        assert count(conn, "SELECT count(*) FROM outputs") == units
        assert count(conn, "SELECT count(*) FROM (SELECT DISTINCT run_id, system, question_id FROM outputs) u") == units
        for run in RUNS:
            assert count(conn, f"SELECT count(*) FROM outputs WHERE run_id = '{run}'") == units // len(RUNS)
        assert count(conn, "SELECT count(*) FROM metric_values") == units * len(METRICS)
        assert count(conn, "SELECT count(*) FROM judgements") == units
        orphans = "SELECT count(*) FROM metric_values WHERE output_id NOT IN (SELECT id FROM outputs)"
        assert count(conn, orphans) == 0
        per_output = (
            "SELECT count(*) FROM outputs o WHERE (SELECT count(*) FROM metric_values v WHERE v.output_id = o.id) != 3"
        )
        assert count(conn, per_output) == 0
        assert count(conn, "SELECT sum(value) FROM metric_values") == units * sum(range(len(METRICS)))
        # every context text once, though every writer stored the shared ones at the same time
        assert count(conn, "SELECT count(*) FROM context_texts") == SHARED + len(QUESTIONS)
    engine.dispose()
    store = open_store(hammered_url, create=False)
    try:
        for run in RUNS:
            data = read_run(store, run, payloads=True)
            outputs = [(q, data.payload(s, q)) for (s, q), stored in data.outputs.items() if stored.ok]
            assert len(outputs) == units // len(RUNS)
            assert all(output.contexts == contexts_of(question) for question, output in outputs)
    finally:
        store.close()
