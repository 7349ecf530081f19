"""A section plugin as a user installs it: a real package (``tests/packages/ragassay_section_plugin``) pip-installed
into a folder of its own; ``ragassay report --html`` shows its sections and ``ragassay serve`` its page and tab,
its broken section as a note naming the plugin."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from conftest import PACKAGES, cli_env, ragassay_cli
from html_report_helpers import write_planted_run

pytestmark = pytest.mark.slow

RUN = "planted-run-0001"
FAILED = (
    "The section answers/fails of plugin &#39;answers&#39; (ragassay-section-plugin 0.4.0) failed: RuntimeError: "
    "no answers today"
)
START_S = 240  # only a broken server takes long


@pytest.fixture(scope="module")
def section_site(tmp_path_factory):
    target = tmp_path_factory.mktemp("section-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-cache-dir"]
        + ["--target", str(target), str(PACKAGES / "ragassay_section_plugin")],
        check=True,
        capture_output=True,
        text=True,
    )
    return target


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    path = tmp_path_factory.mktemp("section-run") / "results.db"
    store, _ = write_planted_run(path)
    store.close()
    return path


def test_an_installed_section_plugin_adds_sections_to_the_html_report(section_site, database, tmp_path):
    html = tmp_path / "report.html"
    result = ragassay_cli("report", RUN, "--db", str(database), "--html", str(html), env=cli_env(section_site))
    assert result.returncode == 0, result.stderr
    page = html.read_text(encoding="utf-8")
    assert page.index('id="answers-note"') < page.index('id="verdicts"')  # report_order 5
    assert page.index('id="grammar"') < page.index('id="answers-answered"') < page.index('id="browser"')
    answered = page.split('id="answers-answered"')[1].split("</section>")[0]
    assert "<td>base</td><td>12</td><td>0</td>" in answered
    assert "<script>" not in answered and "&lt;script&gt;alert(&#39;plugin&#39;)&lt;/script&gt;" in answered
    assert FAILED in page and "Traceback" not in page


def test_ragassay_plugins_lists_the_plugins_sections_after_ragassays_own(section_site):
    result = ragassay_cli("plugins", "--json", env=cli_env(section_site))
    assert result.returncode == 0, result.stderr
    sections = [(c["name"], c["plugin"]) for c in json.loads(result.stdout)["components"] if c["kind"] == "section"]
    assert ("verdicts", "ragassay_sections") in sections and ("failures", "ragassay_sections") in sections
    assert {("answers/answered", "answers"), ("answers/fails", "answers")} <= set(sections)


def test_an_installed_section_plugin_adds_a_page_and_a_tab_to_serve(section_site, database):
    with served(database, cli_env(section_site)) as base:
        status, answers = get(f"{base}/runs/{RUN}/answers")
        assert status == 200, answers[:500]
        assert f'<a href="/runs/{RUN}/answers" class="here">answers per system</a>' in answers
        assert "<td>base</td><td>12</td><td>0</td>" in answers and FAILED in answers
        status, first = get(f"{base}/runs/{RUN}")
        assert status == 200 and f'<a href="/runs/{RUN}/answers">answers per system</a>' in first
        assert first.index('id="pairs"') < first.index('id="answers-note"')  # on its page: after the shipped ones
        assert get(f"{base}/runs/{RUN}/elsewhere")[0] == 404


class served:
    """``ragassay serve`` on a free port with ``env``, in a subprocess: yields its base URL once it listens."""

    def __init__(self, database, env):
        self.database, self.env = database, env

    def __enter__(self) -> str:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ragassay", "serve", "--db", str(self.database), "--port", str(port)],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + START_S
        while not _listening(port):
            if self.process.poll() is not None:
                raise AssertionError(f"ragassay serve ended: {self.process.stderr.read()}")
            assert time.monotonic() < deadline, "ragassay serve did not listen"
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.communicate(timeout=60)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=600) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
