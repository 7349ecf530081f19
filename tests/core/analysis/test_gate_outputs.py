"""The gate with ``latency_s`` and ``tokens`` in its decision family: each output's seconds and tokens, lower is
better, paired by question id across two stored runs like a metric (issue 40, Decisions)."""

from __future__ import annotations

import pytest

from ragassay.analysis.gate import PASS, REGRESSION, GateSettings, gate
from ragassay.errors import ConfigError
from ragassay.results import read_run

from written_runs import write_run

N = 12


def _cells(tokens: int, latency: float) -> list[dict]:
    return [
        {"metrics": {"recall": 0.5}, "usage": (tokens - 10, 10, "local/qwen"), "latency": latency + 0.01 * i}
        for i in range(N)
    ]


@pytest.fixture
def runs(tmp_path):
    base_store, base_id = write_run(tmp_path / "base.db", {"agent": _cells(100, 1.0)}, run_id="base-run-0001")
    cand_store, cand_id = write_run(tmp_path / "cand.db", {"agent": _cells(160, 0.5)}, run_id="cand-run-0001")
    yield read_run(cand_store, cand_id), read_run(base_store, base_id)
    base_store.close()
    cand_store.close()


def test_more_tokens_regress_and_less_latency_passes(runs):
    candidate, baseline = runs
    settings = GateSettings(family=["tokens", "latency_s"], margins={"tokens": 20.0, "latency_s": 0.1})
    rows = {r.metric: r for r in gate(candidate, baseline, settings).rows}
    tokens, latency = rows["tokens"], rows["latency_s"]
    assert (tokens.direction, tokens.baseline_mean, tokens.candidate_mean) == ("lower", 100.0, 160.0)
    assert (tokens.n, tokens.mean_diff, tokens.margin, tokens.outcome) == (N, 60.0, 20.0, REGRESSION)
    assert latency.direction == "lower" and latency.mean_diff == pytest.approx(-0.5) and latency.outcome == PASS


def test_an_output_column_needs_its_own_margin(runs):
    with pytest.raises(ConfigError, match=r"metric tokens has an open range.*margins = \{ tokens = 0.1 \}"):
        gate(*runs, GateSettings(family=["tokens"]))
