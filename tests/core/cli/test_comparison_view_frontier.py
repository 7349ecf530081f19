"""``compare`` and ``cost`` say which latency quantile and which cost their frontier compared (``[evaluation]
frontier``), in the text and in json (issue 40, Decisions)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli

from written_runs import RUN_ID, write_run


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})


def _cells(tokens: int, latency: float, model: str) -> list[dict]:
    return [
        {"metrics": {"recall": 0.5}, "usage": (tokens - 20, 20, model), "latency": latency + 0.01 * i}
        for i in range(20)
    ]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "results.db"
    systems = {"single": _cells(100, 1.0, "openai/gpt-4o-mini"), "agent": _cells(400, 3.0, "local/qwen")}
    store, _ = write_run(path, systems, config={"evaluation": {"frontier": {"latency": "p95", "cost": "tokens"}}})
    store.close()
    return str(path)


def test_compare_names_the_quantile_and_the_cost(db):
    result = invoke("compare", "--db", db, RUN_ID, "--table", "latency", "--format", "markdown")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "frontier of run written-: single (not dominated on recall (higher is better), tokens per answer" in text
    assert "tokens per answer and p95 latency (apart only when the 95% intervals are disjoint)" in text
    data = json.loads(invoke("compare", "--db", db, RUN_ID, "--format", "json").stdout)
    assert data["frontier"] == [
        {
            "run": RUN_ID,
            "metric": "recall",
            "dimensions": ["quality", "cost", "latency"],
            "latency": "p95",
            "cost": "tokens",
            "systems": ["single"],
            "notes": [],
        }
    ]


def test_cost_names_the_quantile_and_the_cost(db):
    result = invoke("cost", "--db", db, RUN_ID)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "frontier: not dominated on recall (higher is better), tokens per answer and p95 latency" in text
    data = json.loads(invoke("cost", "--db", db, RUN_ID, "--format", "json").stdout)
    assert (data["frontier"]["latency"], data["frontier"]["cost"]) == ("p95", "tokens")
    points = {p["system"]: p for p in data["frontier"]["points"]}
    assert (points["single"]["cost_per_answer"], points["agent"]["cost_per_answer"]) == (100.0, 400.0)
