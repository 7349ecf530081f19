"""``ragassay estimate`` on a run that a budget stopped part-way: what the run stored costs nothing, and the
estimate predicts exactly the calls the resumed run then makes (counted by a local server; the response cache
is off, so only stored work saves a call)."""

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

SAMPLES = 12


def estimate(config: Path, *args: str):
    """``ragassay estimate`` in this process (the runs go through the real CLI in their own)."""
    result = CliRunner().invoke(cli, ["estimate", str(config), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_estimate_subtracts_the_stored_units_of_the_run_it_would_resume(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-estimate")
    with OpenAIChatServer(default=_reply) as server:
        config = write_project(tmp_path / "p", CONFIG.format(url=server.url), qa=QA[:SAMPLES])
        fresh = json.loads(estimate(config, "--format", "json"))
        assert sum(r["calls_low"] for r in fresh) == SAMPLES * 2 * 2 and not any(r["stored_calls"] for r in fresh)

        capped = ragassay_cli("run", str(config), "--budget", "calls=19")
        assert capped.returncode == 3, capped.stderr
        spent = server.calls
        assert 0 < spent <= 19

        rows = json.loads(estimate(config, "--format", "json"))
        text = estimate(config)
        assert server.calls == spent  # estimating calls nothing

        resumed = ragassay_cli("run", str(config))
        assert resumed.returncode == 0, resumed.stderr
    remaining = server.calls - spent
    assert sum(r["calls_low"] for r in rows) == remaining
    stored = sum(r["stored_calls"] for r in rows)
    assert stored == SAMPLES * 2 * 2 - remaining > 0
    assert f"subtracted: {stored} calls already stored in the run being resumed" in text
    assert f"subtracted: {stored} calls already stored" in resumed.stderr  # run prints the same estimate
