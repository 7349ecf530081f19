"""Two pages of ``ragassay serve`` in a real headless Chromium (the HTML report test's driver and skip rule),
served by uvicorn on 127.0.0.1: the comparison table, the failure browser's filter form, a sample reached by its
link with planted markup shown as text, and a console free of errors (no script runs, none is blocked)."""

from __future__ import annotations

import pytest

from ragassay.present.serve import create_app

from html_report_helpers import CHROMIUM_MARKS, PLANT, PLANTED_SYSTEM, chromium_driver, write_planted_run
from serve_helpers import live_server

pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
pytestmark = CHROMIUM_MARKS


def test_comparison_and_failure_pages_in_chromium(tmp_path):
    from selenium.webdriver.support.ui import Select

    store, run_id = write_planted_run(tmp_path / "results.db")
    driver = chromium_driver()
    try:
        with live_server(create_app(store, token=None)) as url:
            driver.get(f"{url}/runs/{run_id}")
            names = driver.find_elements("css selector", "table.comparison tbody td:first-child")
            assert [n.text for n in names] == ["base", PLANTED_SYSTEM]  # the planted name shown as text
            _navigate(driver, driver.find_element("link text", "failures"))
            Select(driver.find_element("name", "system")).select_by_visible_text(PLANTED_SYSTEM)
            driver.find_element("name", "q").send_keys("Question 7")
            _navigate(driver, driver.find_element("css selector", "form.filters button"))
            assert driver.find_element("id", "failure-count").text.startswith("1 of 24")
            _navigate(driver, driver.find_element("link text", "q07"))
            case = driver.find_element("css selector", f'div.case[data-system="{PLANTED_SYSTEM}"]')
            assert PLANT in case.find_element("css selector", ".answer").text
            assert not driver.find_elements("css selector", ".answer b")  # the planted </script><b> stayed text
            errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
            assert errors == []
    finally:
        driver.quit()
        store.close()


def _navigate(driver, element) -> None:
    """Click ``element`` and wait until its page is gone (a find right after a click can still see the old page:
    its elements then go stale under the test). The wait ends on the event, not on a time; 60 s only bounds it."""
    from selenium.webdriver.support.ui import WebDriverWait

    element.click()
    WebDriverWait(driver, 60).until(lambda _: _gone(element))


def _gone(element) -> bool:
    """Whether ``element``'s page is gone. ChromeDriver says so in one of two ways: a stale element reference, or,
    when the check meets the navigation half-way, an inspector error "Node with given id does not belong to the
    document" (selenium's ``staleness_of`` knows only the first); any other error is raised."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as exc:
        if "does not belong to the document" in str(exc):
            return True
        raise
    return False
