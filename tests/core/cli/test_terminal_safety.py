"""Terminal-safe output: ESC sequences in a dataset question, a system's answer and an endpoint's error body
reach no command's output raw (show, runs, compare in every text format, the failure lines, error messages)."""

from __future__ import annotations

import json
import re

import pytest

from conftest import ragassay_cli, write_project
from servers.base import JSONServer, Reply

EVIL = "\x1b[2J\x1b]0;pwned\x07"  # clear the screen, retitle the window (OSC ... BEL)
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what a terminal may act on (tab and newline are fine)
QA = [
    {"question_id": "q1", "question": f"Who built{EVIL} the reactor?", "reference_answers": ["Ada"]},
    {"question_id": "q2", "question": "What fails here?", "reference_answers": ["x"]},
]
CONFIG = """
[dataset]
options = {{ path = "qa.jsonl" }}
[systems.endpoint]
rag = "http"
options = {{ url = "{url}/rag", retries = 0, request = {{ q = "{{question}}" }} }}
[evaluation]
metrics = ["exact_match", "token_f1"]
"""


def reply(request):
    if "fails" in request.json["q"]:
        return Reply(400, raw=f"bad request{EVIL} from the endpoint".encode())
    return Reply(200, {"answer": f"Ada{EVIL}\r\nLovelace\x9b31m"})


def assert_safe(text: str, where: str) -> None:
    found = sorted({hex(ord(ch)) for ch in RAW_CONTROL.findall(text)})
    assert not found, f"{where}: raw control characters {found} in {text!r}"


@pytest.fixture(scope="module")
def evil_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("evil")
    with JSONServer({("POST", "/rag"): reply}) as server:
        config = write_project(root, CONFIG.format(url=server.url), qa=QA, docs={})
        result = ragassay_cli("run", str(config), "--description", f"tried{EVIL}")
    assert result.returncode == 0, result.stderr
    return config, result


def test_the_failure_lines_of_run_show_escapes(evil_run):
    _, result = evil_run
    assert_safe(result.stdout, "run stdout")
    assert_safe(result.stderr, "run stderr")
    assert "failed: endpoint / q2: RuntimeError: endpoint answered HTTP 400: bad request\\x1b[2J\\x1b]0;pwned\\x07" in (
        result.stderr
    )


@pytest.mark.parametrize("fmt", ["rich", "markdown", "csv", "json"])
def test_show_runs_and_compare_show_escapes(evil_run, fmt):
    config, run = evil_run
    run_id = run.stderr.split("run ")[1].split(":")[0]
    for args in [("show", run_id, "q1"), ("show", run_id, "q2"), ("runs",), ("compare", run_id)]:
        result = ragassay_cli(*args, "--config", str(config), "--format", fmt)
        assert result.returncode == 0, result.stderr
        assert_safe(result.stdout + result.stderr, f"{' '.join(args[:1])} --format {fmt}")
    shown = ragassay_cli("show", run_id, "q1", "--config", str(config), "--format", fmt).stdout
    if fmt == "json":  # JSON escapes them its own way: the data is kept exactly
        assert json.loads(shown)["sample"]["question"] == QA[0]["question"]
    else:
        assert "\\x1b]0;pwned" in shown  # shown, visibly, not dropped


def test_an_error_message_quoting_input_shows_escapes(evil_run):
    config, run = evil_run
    run_id = run.stderr.split("run ")[1].split(":")[0]
    result = ragassay_cli("show", run_id, f"q9{EVIL}", "--config", str(config))
    assert result.returncode == 2
    assert_safe(result.stderr, "error message")
    assert "q9\\x1b[2J" in result.stderr
