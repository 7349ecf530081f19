"""``ragassay.Run``: what ragassay.run returns and open_run finds; every number comes from the analysis modules."""

from __future__ import annotations

import pytest

import ragassay
from ragassay.analysis.verdicts import decide, decide_values
from ragassay.notebook import cells_table
from ragassay.results import read_run
from ragassay.store import open_store

from conftest import BASIC_CONFIG, write_project


@pytest.fixture
def run(tmp_path):
    return ragassay.run(write_project(tmp_path, BASIC_CONFIG))


def test_run_keeps_the_summary_fields(run):
    assert isinstance(run, ragassay.Run)
    assert run.summary.run_id == run.run_id == run.id
    assert (run.completed, run.failed, run.resumed) == (6, 0, False)
    assert run.warnings is run.summary.warnings
    assert repr(run) == f"<ragassay.Run {run.run_id[:12]}, 6 units done, 0 failed>"


def test_compare_and_verdicts_are_decide(run, tmp_path):
    store = open_store(run.url, create=False)
    try:
        expected = decide(read_run(store, run.run_id), baseline="bm25")
    finally:
        store.close()
    assert run.verdicts(baseline="bm25") == expected
    frame = run.compare(baseline="bm25")
    assert list(frame.index.names) == ["system", "metric"]
    for cell in expected.cells:
        row = frame.loc[(cell.system, cell.metric)]
        assert (row["n"], row["unscored"], row["direction"]) == (cell.n, cell.unscored, cell.direction)
        assert row["mean"] == pytest.approx(cell.mean)
    pair = next(p for p in expected.pairs if p.system == "keyword")
    assert frame.loc[("keyword", pair.metric), "verdict"] == pair.verdict
    assert frame.loc[("bm25", pair.metric), "verdict"] == ""
    low = frame.loc[("keyword", pair.metric), "diff_low"]
    assert (pair.ci_low is None and low != low) or low == pytest.approx(pair.ci_low)  # NaN where the side is open


def test_frames_report_and_rich_display(run, tmp_path):
    assert run.frames().run["id"] == run.run_id
    assert set(run.frames().outputs.index.get_level_values("system")) == {"keyword", "bm25"}
    text = run.report_html(tmp_path / "report.html")
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == text and text.startswith("<!DOCTYPE html")
    shown = run._repr_html_()
    assert "<table>" in shown and "<th>keyword</th>" in shown and "judge:match" in shown
    assert "Verdicts against keyword (baseline)" in shown and "<li>" in shown


def test_open_run_finds_stored_runs(run, tmp_path):
    newest = ragassay.open_run(config=tmp_path)
    assert newest.run_id == run.run_id and newest.summary is None
    assert ragassay.open_run(run.run_id[:8], db=str(tmp_path / "ragassay-results.db")).run_id == run.run_id
    assert newest.compare().equals(run.compare())
    with pytest.raises(AttributeError, match="summary of ragassay.run"):
        _ = newest.failed
    with pytest.raises(ragassay.StoreError):
        ragassay.open_run("nosuchrun", config=tmp_path)


def test_html_escapes_every_name():
    values = {("<b>a</b>", "m&m"): {"q1": 1.0, "q2": 0.0}, ("x", "m&m"): {"q1": 0.0, "q2": 0.0}}
    table = cells_table(decide_values(values, ["<b>a</b>", "x"], ["m&m"], {}))
    assert "<b>a</b>" not in table and "&lt;b&gt;a&lt;/b&gt;" in table and "m&amp;m" in table
