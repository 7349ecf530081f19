"""``ragassay report``: it names the sample fields it does not break down by, with the reason, in the terminal
and in the HTML report; ``--html`` counts the bytes it wrote, not characters (issue 38, item 12)."""

from __future__ import annotations

import re

import pytest

from ragassay.analysis.report import run_report
from ragassay.results import read_run

from conftest import ragassay_cli
from written_runs import write_run

pytestmark = pytest.mark.slow

SAMPLES = 24


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "results.db"
    cells = [{"metrics": {"token_recall": (i % 5) / 5}, "judges": {"match": i % 3 != 0}} for i in range(SAMPLES)]
    metadata = [{"drink": ["café", "thé"][i % 2], "topic": f"t{i % 12}", "source": "wiki"} for i in range(SAMPLES)]
    store, run_id = write_run(path, {"a": cells, "b": cells}, metadata=metadata)
    yield store, run_id, path
    store.close()


def test_the_report_names_each_field_it_leaves_out_and_why(written):
    store, run_id, path = written
    report = run_report(read_run(store, run_id))
    assert [b.by for b in report.breakdowns] == ["metadata.drink"]
    assert report.breakdowns_skipped == {
        "is_answerable": "one value on every sample",  # True unless a sample says otherwise
        "metadata.topic": "12 distinct values, more than 8",
        "metadata.source": "one value on every sample",
    }
    terminal = ragassay_cli("report", run_id, "--db", str(path), env={"COLUMNS": "200"})
    assert terminal.returncode == 0, terminal.stderr
    text = " ".join(terminal.stdout.split())
    assert "metadata.topic: 12 distinct values, more than 8; metadata.source: one value on every sample" in text
    markdown = ragassay_cli("report", run_id, "--db", str(path), "--format", "markdown")
    assert "Not broken down by is_answerable: one value" in markdown.stdout


def test_the_html_report_names_the_fields_and_counts_bytes(written, tmp_path):
    _, run_id, path = written
    target = tmp_path / "report.html"
    result = ragassay_cli("report", run_id, "--db", str(path), "--html", str(target), env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    page = target.read_bytes()
    assert len(page) > len(page.decode("utf-8"))  # café, thé: characters and bytes differ
    (count,) = re.findall(r"\(([\d,]+) bytes", result.stdout)
    assert int(count.replace(",", "")) == len(page)
    assert "metadata.topic: 12 distinct values, more than 8" in page.decode("utf-8")
