"""Every page of ``ragassay serve`` on a stored run: the numbers of the shared analyses, planted markup shown as
text, 404s, the failure browser's filters, and new results showing on refresh."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

from ragassay.models import Sample
from ragassay.results import read_run

from html_report_helpers import PLANT, SAMPLES, _unit, write_planted_run
from serve_helpers import client

RUN = "/runs/planted-run-0001"
PAGES = ["/", RUN, f"{RUN}/breakdowns", f"{RUN}/cost", f"{RUN}/failures", f"{RUN}/samples/q03"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store, _ = write_planted_run(tmp_path_factory.mktemp("serve-pages") / "results.db")
    yield store
    store.close()


@pytest.fixture(scope="module")
def web(store):
    return client(store)


@pytest.mark.parametrize("path", PAGES)
def test_every_page_shows_planted_markup_only_as_text(web, path):
    page = web.get(path)
    assert page.status_code == 200, page.text
    assert PLANT not in page.text and "<b>bold</b>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert re.findall(r"<script\b", page.text) == []  # the pages need no script at all
    assert re.findall(r"https?://", page.text) == []  # nothing fetched from elsewhere


def test_the_comparison_page_shows_the_compare_verdicts(store, web):
    from ragassay.analysis.sentences import verdict_sentences
    from ragassay.analysis.verdicts import decide

    data = read_run(store, "planted-run-0001")
    page = web.get(RUN, params={"baseline": data.systems[1], "alpha": "0.1", "seed": "5"}).text
    sentences = verdict_sentences(decide(data, baseline=data.systems[1], alpha=0.1, seed=5))
    assert sentences and all(html.escape(s, quote=False) in page for s in sentences)
    mean = float(np.nanmean(data.values("base", "token_recall")))
    assert f"{mean:.3f}" in page and '<table class="comparison">' in page and '<table class="pairs">' in page
    assert web.get(RUN, params={"baseline": "nope"}).status_code == 400


def test_the_other_run_pages_show_their_sections(web):
    breakdowns = web.get(f"{RUN}/breakdowns").text
    assert "by metadata.kind" in breakdowns and breakdowns.count("<svg") == 2  # box plots and correlation
    cost = web.get(f"{RUN}/cost").text
    assert '<section id="cost">' in cost and '<table class="latency">' in cost


def test_unknown_runs_samples_and_pages_are_404(web):
    assert web.get("/runs/nosuchrun").status_code == 404
    assert web.get(f"{RUN}/samples/q99").status_code == 404
    assert web.get(f"{RUN}/robustness").status_code == 404  # no perturbed system
    assert web.get(f"{RUN}/failures", params={"page": "9"}).status_code == 404
    assert web.get("/nothing/here").status_code == 404


def _count(page: str) -> int:
    return int(re.search(r'id="failure-count">(\d+) of', page).group(1))


def test_the_failure_browser_filters(store, web):
    data = read_run(store, "planted-run-0001")
    assert _count(web.get(f"{RUN}/failures").text) == 2 * SAMPLES
    below = web.get(f"{RUN}/failures", params={"metric": "token_recall", "below": "0.35", "system": "base"}).text
    expected = int((data.values("base", "token_recall") < 0.35).sum())
    assert _count(below) == expected and 0 < expected < SAMPLES
    values = [float(v) for v in re.findall(r'<td class="num">([\d.]+)</td>', below)]
    assert values == sorted(values)  # worst first
    unscored = web.get(f"{RUN}/failures", params={"metric": "latency_cost", "unscored": "1"}).text
    assert _count(unscored) == 2 and "unscored" in unscored  # q00 of each system
    text = web.get(f"{RUN}/failures", params={"q": "Question 7 <script>"}).text
    assert _count(text) == 2 and "samples/q07" in text
    answers = web.get(f"{RUN}/failures", params={"q": "</script><b>BOLD"}).text  # in the stored answer only
    assert _count(answers) == SAMPLES
    for bad in ({"metric": "nope"}, {"system": "nope"}, {"below": "abc"}, {"status": "lost"}):
        assert web.get(f"{RUN}/failures", params=bad).status_code == 400


def test_the_sample_page_shows_contexts_judge_explanations_and_segments(web):
    page = web.get(f"{RUN}/samples/q03").text
    assert 'class="ctx ref"' in page and "REFERENCE" in page
    assert "judged &lt;script&gt;" in page and 'class="seg-false"' in page and 'class="seg-true"' in page
    assert "ref 3" in page


def test_new_results_show_on_refresh(tmp_path):
    from ragassay.store import open_store, store_url

    store = open_store(store_url(str(tmp_path / "r.db"), tmp_path))
    samples = [Sample(question_id=f"q{i:02d}", question=f"Question {i}?", reference_answers=["a"]) for i in range(4)]
    row = {"id": "growing-run", "fingerprint": "g", "project": "p", "config_path": "x", "config_json": "{}"}
    row.update(spec_json='{"metrics": {"token_recall": {}}, "judges": {"match": {}}}', ragassay_version="0")
    store.create_run(dict(row, sample_count=4), [("base", "{}")], samples)
    try:
        web = client(store)
        store.write_units("growing-run", [_unit("base", 0, samples[0], 0)])
        first = web.get("/runs/growing-run/failures", params={"status": "ok"}).text
        assert _count(first) == 1 and web.get("/runs/growing-run/samples/q01").text.count("no stored output") == 1
        store.write_units("growing-run", [_unit("base", 0, s, i) for i, s in enumerate(samples[1:], start=1)])
        assert _count(web.get("/runs/growing-run/failures", params={"status": "ok"}).text) == 4
        assert "no stored output" not in web.get("/runs/growing-run/samples/q01").text
        assert "4/4" in web.get("/").text
    finally:
        store.close()
