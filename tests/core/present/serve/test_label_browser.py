"""Blind labelling in a real headless Chromium, by keyboard, through the real ``ragassay label`` command: two
annotators label the same 20 items of a stored run (the first one across a restart of the app, with a skip, an
undo and the help), then the store, the inter-annotator kappa and the meta-eval numbers from the stored labels are
checked against scikit-learn and krippendorff; the results browser (``ragassay serve``) shows a planted ``<script>`` as text.

Set ``RAGASSAY_SCREENSHOTS=DIR`` to save the screenshots of docs/labelling.md there (docs/img)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragassay.present.serve import create_app

from conftest import cli_env
from labels_helpers import PLANT, RUN_ID, SYSTEMS, judge_says_correct, open_label_store

CHROMIUM = "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
CHROMEDRIVER = "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian package: chromium)"),
    pytest.mark.skipif(CHROMEDRIVER is None, reason="chromedriver is not installed (Debian package: chromium-driver)"),
]
ITEMS, SEED = 20, 5
ANSWER = re.compile(r"Answer (\d+) of the (first|second) kind")


def annotator_a(kind: int, i: int) -> bool:
    """Annotator A's call: the judge's, except on every fifth sample."""
    return judge_says_correct(kind, i) != (i % 5 == 0)


def annotator_b(kind: int, i: int) -> bool:
    """Annotator B's call: A's, except on samples 3, 10, 17."""
    return annotator_a(kind, i) != (i % 7 == 3)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``ragassay <args> --port P`` in a subprocess, stopped on exit (binds 127.0.0.1)."""

    def __init__(self, *args: str):
        self.port = _free_port()
        env = cli_env(PYTHONUNBUFFERED="1")
        cmd = [sys.executable, "-m", "ragassay", *args, "--port", str(self.port)]
        self.process = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        import httpx

        deadline = time.monotonic() + 120
        url = None
        while url is None:
            line = self.process.stdout.readline()
            assert line or self.process.poll() is None, "the server stopped before printing its URL"
            found = re.search(r"open (http://\S+)", line)
            url = found.group(1) if found else None
        while time.monotonic() < deadline:
            try:
                if httpx.get(url, timeout=2).status_code < 500:
                    return url
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError(f"{url} did not answer")

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()


class ThreadServer:
    """An app served by uvicorn in a thread of this process on 127.0.0.1, stopped on exit: the second annotator
    and the results browser (the app ``ragassay label`` serves, without the cost of starting another process)."""

    def __init__(self, app):
        import threading

        import uvicorn

        port = _free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the app did not start"
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port}/"

    def __enter__(self) -> ThreadServer:
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


def _label_app(store, rubric: str, annotator: str):
    """The app ``ragassay label`` serves, made in this process."""
    from ragassay.labels import load_rubric
    from ragassay.labels.queue import run_items
    from ragassay.present.serve.label_app import LabelQueue, labelling_app
    from ragassay.results import read_run

    scale = load_rubric(rubric)
    items = run_items(read_run(store, RUN_ID), scale, sample=ITEMS, seed=SEED)
    return labelling_app(LabelQueue(store, RUN_ID, scale, annotator, items), token=None)


def _label_server(db: Path, rubric: str, annotator: str) -> Server:
    args = ["label", RUN_ID, "--db", str(db), "--rubric", rubric, "--annotator", annotator]
    return Server(*args, "--sample", str(ITEMS), "--seed", str(SEED))


def _driver():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"):
        options.add_argument(flag)
    options.add_argument("--window-size=1280,1000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def _press(driver, key: str, navigates: bool = True) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    body = driver.find_element("tag name", "body")
    body.send_keys(key)
    if navigates:
        WebDriverWait(driver, 30).until(_gone(body))


def _gone(element):
    """Whether ``element``'s page has been left. Chromium answers a question about a node of a page being torn
    down with "stale element" or, in a race, "unhandled inspector error": both mean the page is gone."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    def check(_driver) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            if "inspector error" not in str(exc):
                raise
            return True
        return False

    return check


def _shown(driver) -> tuple[int, int]:
    """(kind, sample number) of the answer on the page: what the annotator reads (no system name is shown)."""
    (kind,) = {m.group(2) for m in ANSWER.finditer(driver.find_element("css selector", ".answer").text)}
    number = int(ANSWER.search(driver.find_element("css selector", ".answer").text).group(1))
    return (0 if kind == "first" else 1), number


def _key(call: bool) -> str:
    return "2" if call else "1"  # the correct rubric: key 1 = incorrect (0), key 2 = correct (1)


def _label_until(driver, rule, stop_after: int | None = None) -> int:
    labelled = 0
    while "/label/done" not in driver.current_url and labelled != stop_after:
        _press(driver, _key(rule(*_shown(driver))))
        labelled += 1
    return labelled


def _console_errors(driver) -> list:
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    return [e for e in errors if "/favicon.ico" not in e["message"]]  # the browser's own guess, not a page's


def _shoot(driver, name: str) -> None:
    folder = os.environ.get("RAGASSAY_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / f"labelling-{name}.png"))


def test_two_annotators_label_by_keyboard_then_store_kappa_and_meta_eval_agree(tmp_path):
    import krippendorff
    from sklearn.metrics import cohen_kappa_score, precision_score, recall_score

    db = tmp_path / "results.db"
    store = open_label_store(db)  # open here too: the second annotator's app and the results browser use it
    driver = _driver()
    try:
        with _label_server(db, "correct", "ann") as server:
            driver.get(server.url)
            assert "Item 1 of 20" in driver.find_element("id", "progress").text
            _press(driver, "?", navigates=False)  # the help
            assert driver.find_element("id", "help").is_displayed()
            _shoot(driver, "correct")
            skipped = _shown(driver)
            _press(driver, "s")  # skip the first item: it comes back at the end
            assert "Item 2 of 20" in driver.find_element("id", "progress").text
            wrong = _shown(driver)
            _press(driver, _key(not annotator_a(*wrong)))  # a slip ...
            _press(driver, "u")  # ... undone: back on the same item
            assert _shown(driver) == wrong and "0 of 20 labelled" in driver.find_element("id", "progress").text
            assert _label_until(driver, annotator_a, stop_after=10) == 10
            last = _shown(driver)
        with _label_server(db, "correct", "ann") as server:  # a restart: the queue resumes where it stood
            driver.get(server.url)
            assert _shown(driver) == last and "10 of 20 labelled" in driver.find_element("id", "progress").text
            assert _label_until(driver, annotator_a) == 10
            assert "Every item of the queue is labelled" in driver.find_element("id", "finished").text
        with ThreadServer(_label_app(store, "correct", "bob")) as server:
            driver.get(server.url)
            assert _label_until(driver, annotator_b) == 20
            assert _console_errors(driver) == []  # the script ran under the app's Content-Security-Policy
        with ThreadServer(create_app(store, token=None)) as server:  # the results browser: planted text stays text
            driver.get(server.url)
            assert f"labels {PLANT}" in driver.find_element("css selector", "table.runs").text
            driver.get(f"{server.url}runs/{RUN_ID}/samples/q00")  # q00: the second system's answer is planted
            planted = driver.find_element("css selector", f'.case[data-system="{SYSTEMS[1]}"] .answer').text
            assert f"Planted {PLANT}" in planted  # shown as text (an alert would fail every later command)
            assert not driver.find_elements("css selector", "script:not([src])")
            assert _console_errors(driver) == []
        if os.environ.get("RAGASSAY_SCREENSHOTS"):
            with ThreadServer(_label_app(store, "preference", "ann")) as server:
                driver.get(server.url)
                _shoot(driver, "preference")
        by = {who: {x.item_key: x for x in store.labels(RUN_ID, "correct", annotator=who)} for who in ("ann", "bob")}
    finally:
        driver.quit()
        store.close()
    assert len(by["ann"]) == len(by["bob"]) == ITEMS and by["ann"].keys() == by["bob"].keys()
    items = sorted(by["ann"])
    kinds = {key: (SYSTEMS.index(by["ann"][key].system), int(by["ann"][key].sample_id[1:])) for key in items}
    assert skipped in kinds.values() and wrong in kinds.values()
    ann = [by["ann"][key].value for key in items]
    bob = [by["bob"][key].value for key in items]
    assert ann == [float(annotator_a(*kinds[key])) for key in items]  # what was typed is what is stored
    assert bob == [float(annotator_b(*kinds[key])) for key in items]
    kappa = cohen_kappa_score(ann, bob)
    assert 0 < kappa < 1  # they disagree on some items, and agree more than by chance

    # meta-eval from the stored labels: the people's agreement (the ceiling) and the judge against them, where an
    # item's truth is the majority of its labels (a tie, where the two disagree, is left out)
    args = ["meta-eval", RUN_ID, "--db", str(db), "--judge", "match", "--format", "json", "--resamples", "200"]
    result = CliRunner().invoke(_cli(), args)
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)["rubrics"]
    assert (report["rubric"], report["annotators"], report["items"], report["labels"]) == (
        "correct",
        ["ann", "bob"],
        ITEMS,
        2 * ITEMS,
    )
    ceiling = {row["statistic"]: row for row in report["ceiling"]}
    assert ceiling["cohen_kappa"]["value"] == pytest.approx(kappa)
    alpha = krippendorff.alpha(reliability_data=[ann, bob], level_of_measurement="nominal")
    assert ceiling["krippendorff_alpha_nominal"]["value"] == pytest.approx(alpha)
    agreed = [i for i, key in enumerate(items) if ann[i] == bob[i]]
    truth = [ann[i] for i in agreed]
    judged = [float(judge_says_correct(*kinds[items[i]])) for i in agreed]
    stats = {row["statistic"]: row for row in report["agreement"] if row["judge"] == "match"}
    assert stats["kappa"]["n"] == len(agreed) < ITEMS
    assert stats["precision"]["value"] == pytest.approx(precision_score(truth, judged))
    assert stats["recall"]["value"] == pytest.approx(recall_score(truth, judged))
    assert stats["kappa"]["value"] == pytest.approx(cohen_kappa_score(truth, judged))


def _cli():
    from ragassay.cli.main import cli

    return cli
