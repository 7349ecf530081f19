"""Budgets end to end through the real CLI, against a local chat-completions server that counts the requests:
a run capped at 100 calls makes at most 100, stops with partial verdicts (exit 3), and a re-run with a larger
cap completes it with no call made twice (the response cache is off, so only stored work can prevent one)."""

from __future__ import annotations

import collections
import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import ragassay_cli, write_project
from tests.servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")
pytestmark = pytest.mark.slow

SAMPLES = 40

CONFIG = """
    [project]
    name = "budget"
    concurrency = 4

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [llm]
    cache = false

    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 200, overlap = 20 }} }}
    retriever = "bm25"

    [systems.a]
    generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1", backoff_s = 0.01 }} }}
    options = {{ top_k = 2 }}

    [systems.b]
    extends = "a"
    options = {{ top_k = 1 }}

    [evaluation]
    metrics = ["token_recall"]
    judges = [{{ name = "correctness", options = {{ generator = {{ name = "openai", options = {{ model = "gpt-4o", base_url = "{url}/v1", backoff_s = 0.01 }} }} }} }}]
"""

QA = [
    {"question_id": f"q{i:02d}", "question": f"Who built reactor {i}?", "reference_answers": ["Ada Lovelace Labs"]}
    for i in range(SAMPLES)
]


def _reply(request) -> Turn:
    """The judge asks for structured output; the generators for text."""
    if request.json.get("response_format"):
        return Turn(text=json.dumps({"explanation": "Same.", "judgement": "Correct"}), usage=(300, 10, 0))
    return Turn(text="Ada Lovelace Labs", usage=(200, 5, 0))


def _prompts(server) -> list[str]:
    return [json.dumps(r.json["messages"], sort_keys=True) + r.json["model"] for r in server.requests]


def test_capped_run_stops_partial_and_resumes_without_a_duplicate_call(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-budget")
    with OpenAIChatServer(default=_reply) as server:
        config = write_project(tmp_path / "p", CONFIG.format(url=server.url), qa=QA)
        capped = ragassay_cli("run", str(config), "--budget", "calls=100")
        assert capped.returncode == 3, capped.stderr
        assert server.calls <= 100
        assert "partial: " in capped.stderr and f"of {SAMPLES} samples, a uniform random subset" in capped.stderr
        assert "Partial verdicts" in capped.stdout
        db = sqlite3.connect(config.parent / "ragassay-results.db")
        assert db.execute("SELECT status FROM runs").fetchall() == [("budget-limited",)]
        errors = db.execute("SELECT count(*) FROM judgements WHERE explanation LIKE 'error:%'").fetchone()[0]
        assert errors == 0  # nothing refused was stored as an error
        first = server.calls

        resumed = ragassay_cli("run", str(config), "--budget", "calls=1000")
        assert resumed.returncode == 0, resumed.stderr
        assert db.execute("SELECT status FROM runs").fetchall() == [("complete",)]
        assert first < server.calls
        sessions = collections.Counter(_prompts(server))

        before = server.calls
        full = ragassay_cli("run", str(config), "--new")
        assert full.returncode == 0, full.stderr
        assert server.calls - before == SAMPLES * 2 * 2  # 2 systems x (1 answer + 1 judgement)
        uncapped = collections.Counter(_prompts(server)[before:])
        assert sessions == uncapped  # the same requests, each as often: none repeated across the two sessions


def test_bad_budget_is_one_line_and_exit_2(tmp_path: Path):
    config = write_project(tmp_path, CONFIG.format(url="http://127.0.0.1:9"), qa=QA[:2])
    result = ragassay_cli("run", str(config), "--budget", "call=100")
    assert result.returncode == 2
    assert "--budget: 'call=100' is not KEY=VALUE" in result.stderr and "Traceback" not in result.stderr
