"""``ragassay estimate`` on the budget test's project: calls per system, metric and judge before any call (the
local server is never asked), exact for fixed patterns, a range for re-asks, and equal to what a run makes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ragassay_cli, write_project
from tests.core.cli.test_budget_cli import CONFIG, QA, SAMPLES, _reply
from tests.servers.openai_chat import OpenAIChatServer

pytest.importorskip("openai")
pytestmark = pytest.mark.slow


def test_estimate_predicts_the_calls_of_the_run(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-estimate")
    with OpenAIChatServer(default=_reply) as server:
        config = write_project(tmp_path, CONFIG.format(url=server.url), qa=QA)
        result = ragassay_cli("estimate", str(config), "--format", "json")
        assert result.returncode == 0, result.stderr
        assert server.calls == 0
        rows = {(r["system"], r["component"]): r for r in json.loads(result.stdout)}
        assert rows[("a", "system")]["calls_low"] == rows[("a", "system")]["calls_high"] == SAMPLES
        assert rows[("a", "metric:token_recall")]["calls_high"] == 0
        assert rows[("a", "metric:token_recall")]["note"] == "calls no model"
        judge = rows[("b", "judge:correctness")]
        assert (judge["calls_low"], judge["calls_high"]) == (SAMPLES, 3 * SAMPLES)  # 2 corrective re-asks at most
        assert judge["input_tokens"] > 0 and judge["usd"] > 0
        markdown = ragassay_cli("estimate", str(config)).stdout
        assert "| a | judge:correctness | 40-120 |" in markdown
        assert ragassay_cli("run", str(config), "-q").returncode == 0
        assert server.calls == sum(r["calls_low"] for r in rows.values())
        after = ragassay_cli("estimate", str(config)).stdout  # the complete run would be resumed: nothing to do
        assert f"subtracted: {server.calls} calls already stored in the run being resumed" in after
