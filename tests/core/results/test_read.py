"""The read model: ``read_run`` reads each table once, and the commands built on it stay within their SQL budgets.

Statements are counted with a SQLAlchemy engine event listener around the real command, in this process.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from sqlalchemy import event
from sqlalchemy.engine import Engine

import ragassay
from ragassay.cli.main import cli
from ragassay.errors import StoreError
from ragassay.results import read_run
from ragassay.store import open_store

from conftest import BASIC_CONFIG, write_project

COMPARE_BUDGET = 8
HTML_BUDGET = 10


class Statements:
    """Every SQL statement ``engine`` executes while active (default: any engine of this process; a test that
    reads one store names its engine, so a background thread of an earlier test cannot add to the count)."""

    def __init__(self, engine=Engine):
        self.engine = engine

    def __enter__(self):
        self.seen: list[str] = []
        event.listen(self.engine, "before_cursor_execute", self._seen)
        return self

    def __exit__(self, *exc):
        event.remove(self.engine, "before_cursor_execute", self._seen)

    def _seen(self, conn, cursor, statement, *args):
        self.seen.append(statement)


def project(root, samples: int):
    qa = [
        {
            "question_id": f"q{i:03d}",
            "question": f"Who built the alpha reactor, case {i}?",
            "reference_answers": ["Ada Lovelace Labs"],
            "reference_context_ids": ["corpus/alpha.md"],
            "group_id": f"g{i // 2}",
            "metadata": {"kind": "ab"[i % 2]},
        }
        for i in range(samples)
    ]
    config = write_project(root, BASIC_CONFIG, qa=qa)
    return config, ragassay.run(config).run_id


def command(*args) -> tuple[int, list[str]]:
    with Statements() as counted:
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return len(counted.seen), counted.seen


@pytest.mark.parametrize("samples", [3, 24])
def test_compare_and_the_html_report_stay_within_their_statement_budgets(tmp_path, samples):
    config, run_id = project(tmp_path, samples)
    compared, _ = command("compare", run_id, "-c", str(config), "--format", "json")
    html, statements = command("report", run_id, "-c", str(config), "--html", str(tmp_path / "r.html"))
    assert compared <= COMPARE_BUDGET
    assert html <= HTML_BUDGET, statements


def test_no_statement_per_output(tmp_path):
    small = project(tmp_path / "small", 3)
    large = project(tmp_path / "large", 24)
    counts = []
    for config, run_id in (small, large):
        compared, _ = command("compare", run_id, "-c", str(config), "--format", "json")
        html, _ = command("report", run_id, "-c", str(config), "--html", str(config.parent / "r.html"))
        counts.append((compared, html))
    assert counts[0] == counts[1]  # 8 times the outputs, the same statements


def test_read_run_reads_each_table_once_and_holds_every_score(tmp_path):
    config, run_id = project(tmp_path, 6)
    store = open_store(f"sqlite:///{config.parent / 'ragassay-results.db'}", create=False)
    try:
        with Statements(store.engine) as counted:
            data = read_run(store, run_id[:6])
        assert len(counted.seen) == 6
        assert data.id == run_id and data.systems == ["keyword", "bm25"] and len(data.question_ids) == 6
        assert data.columns[-1] == "judge:match" and data.direction("judge:match") == "higher"
        values = data.values("bm25", "token_recall")
        assert values.shape == (6,) and not np.isnan(values).any()
        assert data.info.state == "complete" and data.info.sample_count == 6
        with pytest.raises(ValueError, match="read without payloads"):
            data.payload("bm25", "q000")
        with_payloads = read_run(store, run_id, payloads="grouped")  # the samples carry a group_id
        assert with_payloads.payload("bm25", "q000").answer
        with pytest.raises(StoreError, match="not found"):
            read_run(store, "nosuchrun")
    finally:
        store.close()


def test_the_json_of_compare_reads_like_the_read_model(tmp_path):
    config, run_id = project(tmp_path, 6)
    result = CliRunner().invoke(cli, ["compare", run_id, "-c", str(config), "--format", "json"])
    data = json.loads(result.output)
    store = open_store(f"sqlite:///{config.parent / 'ragassay-results.db'}", create=False)
    try:
        run = read_run(store, run_id)
    finally:
        store.close()
    for row in data["comparison"]:
        if "token_recall" in row:
            assert row["token_recall"] == pytest.approx(np.nanmean(run.values(row["system"], "token_recall")))


class RowByRow:
    """The real store without ``score_batches``: read_run takes its score records one by one (as from a backend
    that has only ``score_records``)."""

    def __init__(self, store):
        self.store = store

    def __getattr__(self, name):
        if name == "score_batches":
            raise AttributeError(name)
        return getattr(self.store, name)


def test_scores_read_in_batches_make_the_table_of_records_read_one_by_one(tmp_path):
    config, run_id = project(tmp_path, 6)
    store = open_store(f"sqlite:///{config.parent / 'ragassay-results.db'}", create=False)
    try:
        batched, single = read_run(store, run_id).score_table, read_run(RowByRow(store), run_id).score_table
    finally:
        store.close()
    assert len(batched) == 6 * 2 * len(batched.columns) and batched.texts  # every score, judge verdicts kept
    assert (batched.systems, batched.columns, batched.texts) == (single.systems, single.columns, single.texts)
    assert (batched.usages, batched.foreign) == (single.usages, single.foreign)
    for name in ("system", "sample", "column", "repeat", "null_cost"):
        assert np.array_equal(getattr(batched, name), getattr(single, name)), name
    assert np.array_equal(batched.value, single.value, equal_nan=True)
    assert list(batched.rows()) == list(single.rows())


def test_payloads_added_to_a_run_read_without_them_are_those_of_a_read_with_them(tmp_path):
    from ragassay.results.read import with_payloads

    config, run_id = project(tmp_path, 4)
    store = open_store(f"sqlite:///{config.parent / 'ragassay-results.db'}", create=False)
    try:
        plain = read_run(store, run_id)
        with Statements(store.engine) as counted:
            added = with_payloads(store, plain)
        whole = read_run(store, run_id, payloads=True)
    finally:
        store.close()
    assert not any("run_samples" in s or "metric_values" in s for s in counted.seen)  # the outputs only
    assert added.has_payloads and added.outputs == whole.outputs and added.context_texts == whole.context_texts
    assert added.payload("bm25", "q001") == whole.payload("bm25", "q001") and added.payload("bm25", "q001").answer
    assert added.score_table is plain.score_table and not plain.has_payloads
