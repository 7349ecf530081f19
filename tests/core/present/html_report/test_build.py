"""The HTML report: sections of a real run, escaping of planted markup, same bytes for the same run, size cap,
nothing fetched from the network, and ``ragassay report --html``."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import pytest

import ragassay
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.present.html_report import build_report

from conftest import BASIC_CONFIG, QA, cli_env, ragassay_cli, write_project
from html_report_helpers import PLANT, PLANTED_ANSWER, PLANTED_SYSTEM, SAMPLES, write_planted_run

SECTIONS = ["verdicts", "comparison", "pairs", "breakdowns", "cost", "correlation", "grammar", "browser"]


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """A real run (keyword vs BM25, 3 questions) whose samples have a metadata field and GRAMMAR groups."""
    root = tmp_path_factory.mktemp("real")
    qa = [dict(q, metadata={"kind": "ab"[i % 2]}, group_id=f"g{i % 2}") for i, q in enumerate(QA)]
    write_project(root, BASIC_CONFIG, qa=qa)
    ragassay.run(root)
    store = Project(load_config(root)).open_store(create=False)
    run_id = store.list_runs()[0]["id"]
    yield root, store, run_id
    store.close()


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    store, run_id = write_planted_run(tmp_path_factory.mktemp("planted") / "results.db")
    yield store, run_id
    store.close()


def _browser_data(page: str) -> dict:
    block = re.search(r'<script type="application/json" id="browser-data">(.*?)</script>', page, re.S)
    return json.loads(block.group(1))


def test_real_run_has_every_section_with_its_numbers(real):
    _, store, run_id = real
    page = build_report(store, [run_id])
    for anchor in SECTIONS:
        assert f'<section id="{anchor}">' in page, anchor
    for table in ("comparison", "pairs", "cost", "grammar"):
        assert f'<table class="{table}">' in page, table
    assert page.count("<svg") == 3  # the correlation matrix, box plots by metadata.kind and by group_id
    assert "by metadata.kind" in page and "by group_id" in page
    frames = ragassay.load_run(run_id, config=real[0])
    mean = frames.scores().loc["bm25"]["judge:match"].mean()
    assert f"{mean:.3f}" in page
    data = _browser_data(page)
    assert data["systems"] == ["keyword", "bm25"] and len(data["samples"]) == len(QA)
    sample = data["samples"][0]
    assert sample["references"] == QA[0]["reference_answers"]
    assert any(c["reference"] for s in sample["systems"] for c in s["contexts"])


def test_planted_markup_appears_only_escaped(planted):
    store, run_id = planted
    page = build_report(store, [run_id])
    assert "alert(1)" in page
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the data block and the page script
    assert "<b>bold</b>" not in page
    assert f"<td>{PLANTED_SYSTEM}" not in page and "evil&lt;script&gt;alert(1)&lt;/script&gt;" in page
    data = _browser_data(page)
    answers = {e["answer"] for s in data["samples"] for e in s["systems"]}
    assert PLANTED_ANSWER in answers  # the JSON block decodes back to the exact text
    segments = [seg for s in data["samples"] for e in s["systems"] for j in e["judgements"] for seg in j["segments"]]
    assert segments and all(seg["text"] == f"segment {PLANT}" for seg in segments)
    assert {seg["correct"] for seg in segments} == {True, False}


def test_same_run_gives_the_same_bytes_in_another_process(planted, tmp_path):
    store, run_id = planted
    page = build_report(store, [run_id], seed=3)
    assert build_report(store, [run_id], seed=3) == page
    url = store.engine.url.render_as_string(hide_password=False)
    script = (
        "import sys; from ragassay.store import open_store; from ragassay.present.html_report import build_report; "
        f"sys.stdout.write(build_report(open_store({url!r}), [{run_id!r}], seed=3))"
    )
    env = cli_env(PYTHONHASHSEED="12345")
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=240)
    assert other.returncode == 0, other.stderr
    assert other.stdout == page
    assert build_report(store, [run_id], seed=4) != page  # the seed reaches the intervals


def test_failure_browser_is_capped_and_says_so(planted):
    store, run_id = planted
    page = build_report(store, [run_id], worst=2)
    data = _browser_data(page)
    assert 2 <= len(data["samples"]) <= 4  # the union of each system's 2 worst
    assert f"of {SAMPLES:,} samples" in page
    full = build_report(store, [run_id], worst=SAMPLES)
    assert len(_browser_data(full)["samples"]) == SAMPLES and len(page) < len(full)
    worst_base = data["samples"][0]["systems"][0]
    assert worst_base["status"] == "ok"


def test_no_url_is_fetched_and_nothing_external_is_linked(real, planted):
    for store, run_id in (real[1:], planted):
        page = build_report(store, [run_id])
        assert re.findall(r"https?://", page) == []
        assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\((?!#)", page)  # url(#clip): in-page
        assert set(re.findall(r'href="([a-z]+):', page)) <= {"data"}  # plot images inlined as data URIs


def test_cli_writes_the_html_report(real, tmp_path):
    root, _, run_id = real
    target = tmp_path / "report.html"
    result = ragassay_cli("report", run_id[:8], "-c", str(root), "--html", str(target), "--seed", "1", env=cli_env())
    assert result.returncode == 0, result.stderr
    assert "written to" in result.stdout and target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    bad = ragassay_cli("report", run_id[:8], "-c", str(root), "--html", str(target), "--baseline", "nope")
    assert bad.returncode == 2 and "--baseline 'nope' is not a system" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_breakdown_fields_pick_few_valued_fields(real):
    from ragassay.analysis.report import breakdown_fields
    from ragassay.results import read_run

    fields = breakdown_fields(read_run(real[1], real[2]))
    assert "metadata.kind" in fields and "group_id" in fields and "question" not in fields


def test_report_of_two_runs_keeps_anchors_apart(real, tmp_path):
    _, store, run_id = real
    page = build_report(store, [run_id, run_id])
    assert '<section id="verdicts-1">' in page and '<section id="verdicts-2">' in page


def test_report_verdicts_are_the_compare_verdicts(real, planted):
    from ragassay.analysis.sentences import verdict_sentences
    from ragassay.analysis.verdicts import decide
    from ragassay.results import read_run

    for store, run_id in (real[1:], planted):
        data = read_run(store, run_id)
        for baseline in data.systems:
            page = build_report(store, [run_id], baseline=baseline, alpha=0.1, seed=5)
            for sentence in verdict_sentences(decide(data, baseline=baseline, alpha=0.1, seed=5)):
                assert html.escape(sentence) in page
