"""``ragassay estimate`` subtracts what the LLM response cache already answers: after a run, the same systems and
judge under a new fingerprint (another metric list, so a new run that resumes nothing) are estimated at 0 calls,
every one a cache hit, without a call to the server (the cache pass refuses every call that would reach it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli
from tests.conftest import ragassay_cli, write_project
from tests.core.cli.test_budget_cli import CONFIG, QA, _reply
from tests.servers.openai_chat import OpenAIChatServer

pytest.importorskip("openai")
pytestmark = pytest.mark.slow

SAMPLES = 8


def _estimate(config: Path) -> tuple[list[dict], str]:
    result = CliRunner().invoke(cli, ["estimate", str(config), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_cached_calls_are_subtracted_and_said(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cache")
    text = CONFIG.replace("cache = false", "cache = true")
    with OpenAIChatServer(default=_reply) as server:
        config = write_project(tmp_path / "p", text.format(url=server.url), qa=QA[:SAMPLES])
        before, _ = _estimate(config)
        assert sum(r["calls_low"] for r in before) == SAMPLES * 2 * 2 and not any(r["cached_calls"] for r in before)
        run = ragassay_cli("run", str(config))
        assert run.returncode == 0, run.stderr
        made = server.calls
        config.write_text(config.read_text().replace('metrics = ["token_recall"]', 'metrics = ["exact_match"]'))
        after, _ = _estimate(config)
        assert server.calls == made  # the cache pass sends nothing
    assert not any(r["stored_calls"] for r in after)  # a new fingerprint: no run to resume
    assert sum(r["calls_low"] for r in after) == 0
    cached = sum(r["cached_calls"] for r in after)
    assert cached == SAMPLES * 2 * 2 >= made  # every call of the run (identical ones were sent once)
    markdown = CliRunner().invoke(cli, ["estimate", str(config)]).stdout
    assert f"subtracted: {cached} calls answered by the LLM response cache" in markdown
