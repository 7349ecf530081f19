"""Both failure browsers list the worst outputs first, each with the scores that make it worst (issue 38, item 8):
the HTML report's browser (its data, and the page in a real Chromium) and ``ragassay serve``'s failures page."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from ragassay.present.html_report import build_report

from written_runs import write_run

SAMPLES = 30
FAILING = {"a": {25, 26, 27}, "b": {10, 20}}  # every other output is perfect
WORST = {("q025", "a"), ("q026", "a"), ("q027", "a"), ("q010", "b"), ("q020", "b")}


def _cells(bad: set[int]) -> list[dict]:
    return [
        {
            "metrics": {
                "contains_answer": 0.0 if i in bad else 1.0,
                "token_recall": 0.2 if i in bad else 1.0,
                "extra": i / SAMPLES,  # worst on q000, which is perfect on every other column
            },
            "judges": {"match": i not in bad},
            "latency": 0.01,
        }
        for i in range(SAMPLES)
    ]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("failures")
    store, run_id = write_run(folder / "results.db", {s: _cells(bad) for s, bad in FAILING.items()})
    yield store, run_id, folder
    store.close()


def _browser_data(page: str) -> dict:
    block = re.search(r'<script type="application/json" id="browser-data">(.*?)</script>', page, re.S)
    return json.loads(block.group(1))


def test_the_report_browser_orders_the_worst_outputs_first(written):
    store, run_id, _ = written
    page = build_report(store, [run_id], worst=3)
    data = _browser_data(page)
    rows = [(data["samples"][c]["id"], data["samples"][c]["systems"][e]["system"]) for c, e in data["order"]]
    assert len(rows) == 2 * len(data["samples"])  # every system's output of each chosen sample
    assert set(rows[: len(WORST)]) == WORST  # the failures first, not the perfect q000
    first = data["samples"][data["order"][0][0]]["systems"][data["order"][0][1]]
    assert [m["value"] for m in first["metrics"]][:2] == [0.0, 0.2] and first["judgements"][0]["verdict"] == "incorrect"
    assert "worst first" in page


def test_the_serve_failures_page_orders_the_worst_first_with_their_scores(written):
    from starlette.testclient import TestClient

    from ragassay.present.serve import create_app

    store, run_id, _ = written
    web = TestClient(create_app(store, token=None, extra=[]), base_url="http://127.0.0.1")
    page = web.get(f"/runs/{run_id}/failures").text
    rows = re.findall(r'samples/(q\d+)">q\d+</a></td><td>(\w+)</td><td>ok</td><td class="scores">([^<]*)</td>', page)
    assert len(rows) == 50  # a page
    assert {(q, s) for q, s, _ in rows[: len(WORST)]} == WORST
    assert rows[0][2] == "contains_answer 0.000, token_recall 0.200, extra 0.333, judge:match 0.000"
    assert rows[-1][2].startswith("contains_answer 1.000, token_recall 1.000, extra")
    chosen = web.get(f"/runs/{run_id}/failures", params={"metric": "extra"}).text
    values = [float(v) for v in re.findall(r'<td class="num">([\d.]+)</td>', chosen)]
    assert values == sorted(values) and values[0] == 0.0  # with a metric: by its value, worst first (q000)


CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None, reason="Chromium and chromedriver are not installed")
def test_the_report_browser_shows_each_rows_scores_in_chromium(written):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import Select

    store, run_id, folder = written
    path = folder / "report.html"
    path.write_text(build_report(store, [run_id], worst=3), encoding="utf-8")
    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(path.as_uri())
        summaries = [
            s.get_attribute("textContent") for s in driver.find_elements("css selector", "details.case summary")
        ]
        first = "b | q010 | ok | contains_answer 0.000, token_recall 0.200, extra 0.333, judge:match incorrect"
        assert summaries[0].startswith(first)
        assert "contains_answer 1.000, token_recall 1.000, extra" in summaries[-1]
        Select(driver.find_element("id", "filter-system")).select_by_value("a")
        shown = [s for s in driver.find_elements("css selector", "details.case") if s.is_displayed()]
        assert shown[0].find_element("css selector", "summary").text.startswith("a | q025 | ok | contains_answer 0.000")
        Select(driver.find_element("id", "filter-metric")).select_by_value("extra")  # by its value, worst first
        shown = [s for s in driver.find_elements("css selector", "details.case") if s.is_displayed()]
        assert shown[0].find_element("css selector", "summary").text.startswith("a | q000 | ok")
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
    finally:
        driver.quit()
