"""The HTML report and the run's first ``ragassay serve`` page open with the conclusion (issue 38, item 13), on
the issue's project (32 questions, 3 systems, GRAMMAR groups): the same sentences as the analysis, the module to
fix first, and a verdict section and table that do not repeat themselves."""

from __future__ import annotations

import html
import re

import pytest
from conclusion_project import write_and_run
from starlette.testclient import TestClient

from ragassay.analysis.conclusion import run_conclusion
from ragassay.analysis.report import run_report
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.present.html_report import build_report
from ragassay.present.serve import create_app
from ragassay.results import read_run


@pytest.fixture(scope="module")
def issue_run(tmp_path_factory):
    config, run_id = write_and_run(tmp_path_factory.mktemp("conclusion"))
    store = Project(load_config(config)).open_store(create=False)
    yield store, run_id, build_report(store, [run_id])
    store.close()


def _anchors(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)">', page)


def _section(page: str, anchor: str) -> str:
    return page.split(f'<section id="{anchor}">')[1].split("</section>")[0]


def test_the_report_opens_with_the_conclusion_of_the_analysis(issue_run):
    store, run_id, page = issue_run
    assert _anchors(page)[:2] == ["conclusion", "verdicts"]
    report = run_report(read_run(store, run_id, payloads="grouped"))
    expected = run_conclusion(report.comparison.runs[0], report.grammar).sentences
    items = re.findall(r"<li>(.*?)</li>", _section(page, "conclusion"))
    assert items == [html.escape(s, quote=False) for s in expected]
    assert any(s.startswith("Fix first: the language model") for s in expected)
    assert any(s.startswith("Cannot be decided yet") and "samples would settle" in s for s in expected)


def test_the_verdicts_and_their_table_say_too_few_once(issue_run):
    _, _, page = issue_run
    verdicts = _section(page, "verdicts")
    assert verdicts.count("Too few differing samples") <= 1
    for cell in re.findall(r"<td[^>]*>(.*?)</td>", _section(page, "pairs"), re.S):
        assert cell.count("too few differing samples") <= 1, cell


def test_the_runs_first_serve_page_opens_with_the_conclusion(issue_run):
    store, run_id, _ = issue_run
    web = TestClient(create_app(store, token=None, prepare=False), base_url="http://127.0.0.1")
    first = web.get(f"/runs/{run_id}")
    assert first.status_code == 200 and _anchors(first.text)[0] == "conclusion"
    assert "Fix first: the language model" in first.text
