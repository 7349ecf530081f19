"""The HTML report opened in a real headless Chromium: tables, SVG plots and the failure browser render, the
filters work, nothing planted runs, and the console stays clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from html_report_helpers import CHROMIUM_MARKS, PLANTED_SYSTEM, SAMPLES, chromium_driver, write_planted_run

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
pytestmark = CHROMIUM_MARKS


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    from ragassay.present.html_report import build_report

    folder = tmp_path_factory.mktemp("chromium")
    store, run_id = write_planted_run(folder / "results.db")
    try:
        path = folder / "report.html"
        path.write_text(build_report(store, [run_id]), encoding="utf-8")
    finally:
        store.close()
    return path


def _visible_cases(driver) -> int:
    return len([c for c in driver.find_elements("css selector", "#browser-cases details.case") if c.is_displayed()])


def test_report_renders_filters_and_keeps_console_clean(report_file, tmp_path):
    from selenium.webdriver.support.ui import Select

    driver = chromium_driver()
    try:
        driver.get(report_file.as_uri())
        # an alert() from planted text would make every later driver command raise UnexpectedAlertPresent
        tables = driver.find_elements("css selector", "table.comparison, table.pairs, table.cost")
        assert sorted(t.get_attribute("class") for t in tables) == ["comparison", "cost", "pairs"]
        assert all(t.is_displayed() for t in tables)
        plots = driver.find_elements("css selector", ".plot svg")
        assert len(plots) >= 2 and all(p.size["width"] > 100 and p.size["height"] > 100 for p in plots)
        assert "no sample has a group_id" in driver.find_element("id", "grammar").text
        names = driver.find_elements("css selector", "table.comparison tbody td:first-child")
        assert [n.text for n in names] == ["base", PLANTED_SYSTEM]  # the planted name is shown as text

        cases = driver.find_elements("css selector", "#browser-cases details.case")
        assert len(cases) == 2 * SAMPLES and _visible_cases(driver) == 2 * SAMPLES
        Select(driver.find_element("id", "filter-system")).select_by_value(PLANTED_SYSTEM)
        assert _visible_cases(driver) == SAMPLES
        assert driver.find_element("id", "browser-count").text == f"{SAMPLES} of {2 * SAMPLES} shown"
        Select(driver.find_element("id", "filter-verdict")).select_by_value("correct")
        correct = sum((i + 1) % 2 == 0 for i in range(SAMPLES))  # the helper's rule for system 1
        assert _visible_cases(driver) == correct
        Select(driver.find_element("id", "filter-verdict")).select_by_value("")
        Select(driver.find_element("id", "filter-metric")).select_by_value("token_recall")
        driver.find_element("id", "filter-max").send_keys("0.3")
        expected = sum(((i * 7 + 3) % 10) / 10 <= 0.3 for i in range(SAMPLES))
        assert _visible_cases(driver) == expected

        first = driver.find_element("css selector", "#browser-cases details.case:not([hidden]) summary")
        first.click()
        opened = driver.find_element("css selector", "#browser-cases details.case[open]")
        assert "<script>alert(1)</script>" in opened.find_element("css selector", ".answer").text
        assert opened.find_elements("css selector", ".ctx.ref")  # the reference context is marked
        assert not driver.find_elements("css selector", "b")  # the planted </script><b> stayed text

        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
        driver.save_screenshot(str(tmp_path / "report.png"))
        assert (tmp_path / "report.png").stat().st_size > 1000
    finally:
        driver.quit()
