"""The runner end to end on a real project: stored results, resume, failures, unscored values."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from ragassay.analysis.comparison import compare
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.engine.runner import Runner, plan_run
from ragassay.errors import DatasetError
from ragassay.results import read_run

from conftest import QA, EchoRAG, write_project

ECHO = """
    [project]
    concurrency = 3
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = { path = "qa.jsonl" }
    [systems.echo]
    rag = "testkit/echo"
    [systems.flaky]
    rag = { name = "testkit/echo", options = { fail_ids = ["q2"] } }
    [evaluation]
    metrics = ["token_recall", "exact_match", "context_mrr", "testkit/explode", "testkit/nan"]
    judges = ["match"]
"""


def run_once(path, host, **kwargs):
    loaded = load_config(path)
    plan = plan_run(loaded, host.registry)
    store = Project(loaded).open_store()
    try:
        return asyncio.run(Runner(plan, store).run(**kwargs)), store
    finally:
        store.close()


def db_rows(path, sql):
    con = sqlite3.connect(path.parent / "ragassay-results.db")
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_every_system_sample_metric_and_judge_is_stored(tmp_path, host):
    path = write_project(tmp_path, ECHO)
    summary, store = run_once(path, host)
    assert (summary.units, summary.completed, summary.failed, summary.resumed) == (6, 6, 1, False)
    assert summary.failures == [("flaky", "q2", "RuntimeError: scripted failure on q2")]
    assert db_rows(path, "select count(*) from outputs") == [(6,)]
    # 5 ok outputs x 5 metrics; the failed output has none
    assert db_rows(path, "select count(*) from metric_values") == [(25,)]
    values = dict(db_rows(path, "select metric, max(value) from metric_values group by metric"))
    assert values["token_recall"] == 1.0 and values["exact_match"] == 1.0 and values["context_mrr"] == 1.0
    reasons = dict(
        db_rows(path, "select metric, min(unscored_reason) from metric_values where value is null group by metric")
    )
    assert reasons == {"testkit/explode": "error: ValueError: boom", "testkit/nan": "error: metric returned nan"}
    assert summary.metric_errors == 10
    assert db_rows(path, "select verdict, count(*) from judgements group by verdict") == [("correct", 5)]


def test_rerun_resumes_and_retries_only_failures(tmp_path, host):
    path = write_project(tmp_path, ECHO)
    first, _ = run_once(path, host)
    calls = EchoRAG.calls
    second, _ = run_once(path, host)
    assert second.resumed and second.run_id == first.run_id
    assert (second.skipped, second.completed, second.failed) == (5, 1, 1)
    assert EchoRAG.calls == calls + 1  # only the failed unit ran again
    assert db_rows(path, "select count(*) from outputs") == [(6,)]  # replaced, not duplicated
    third, _ = run_once(path, host, new=True)
    assert not third.resumed and third.run_id != first.run_id


def test_adding_a_metric_scores_stored_outputs_without_rerunning_systems(tmp_path, host):
    path = write_project(tmp_path, ECHO.replace(', "testkit/explode", "testkit/nan"', ""))
    first, _ = run_once(path, host)
    calls = EchoRAG.calls
    # same systems and data, one more metric: a new fingerprint, so a new run; the point here is the
    # runner's partial-unit path, exercised by deleting one metric row of the stored run
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    con.execute("delete from metric_values where metric = 'exact_match' and output_id = (select min(id) from outputs)")
    con.commit()
    con.close()
    second, _ = run_once(path, host)
    assert second.run_id == first.run_id
    assert EchoRAG.calls == calls + 1  # only the failed unit; the partial unit was re-scored from storage
    assert db_rows(path, "select count(*) from metric_values where metric = 'exact_match'") == [(5,)]


def test_comparison_aggregates_means_counts_and_failures(tmp_path, host):
    path = write_project(tmp_path, ECHO)
    summary, _ = run_once(path, host)
    loaded = load_config(path)
    store = Project(loaded).open_store()
    comparison = compare([read_run(store, summary.run_id)])
    store.close()
    rows = {r.system: r for r in comparison.rows}
    assert rows["echo"].failed == 0 and rows["flaky"].failed == 1
    assert rows["flaky"].cells["token_recall"].n == 2
    assert rows["echo"].cells["testkit/nan"].mean is None and rows["echo"].cells["testkit/nan"].unscored == 3
    assert rows["echo"].cells["judge:match"].mean == 1.0


def test_metric_unscored_when_references_are_missing(tmp_path, host):
    qa = [QA[0], {"question_id": "x", "question": "What?"}]  # none at all: refused (test_requirements.py)
    path = write_project(tmp_path, ECHO, qa=qa)
    summary, _ = run_once(path, host)
    assert any("will be unscored on 1 of 2 samples: no reference_answers (e.g. 'x')" in w for w in summary.warnings)
    reasons = db_rows(
        path,
        "select m.unscored_reason from metric_values m join outputs o on o.id = m.output_id "
        "where m.metric = 'token_recall' and o.question_id = 'x'",
    )
    assert reasons and all(r[0] and "reference" in r[0] for r in reasons)


def test_empty_corpus_is_a_clear_error(tmp_path, host):
    path = write_project(
        tmp_path,
        """
        [corpus]
        paths = ["corpus/*"]
        [dataset]
        options = { path = "qa.jsonl" }
        [systems.k]
        retriever = "keyword"
        generator = "extractive"
    """,
        docs={"empty.md": ""},
    )
    with pytest.raises(DatasetError, match="corpus has no text"):
        run_once(path, host)


def test_real_retrieval_systems_on_a_real_corpus(project, host):
    summary, _ = run_once(project, host)
    assert summary.failed == 0 and summary.completed == 6
    ids = db_rows(project, "select system, question_id, output_json from outputs where question_id = 'q3'")
    assert all("corpus/gamma.txt#0" in row[2] for row in ids)
