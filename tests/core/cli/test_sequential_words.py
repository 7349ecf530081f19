"""What ``run --sequential``, ``runs`` and ``compare`` say about a sequential run that stopped at its maximum
sample count (issue 38, items 1 and 2): a comparison that reached the maximum is "not settled", never "settled";
a stopped run's verdicts table carries no fixed-n interval or p-value; its outputs not run are not "missing"."""

from __future__ import annotations

import json
import re

import pytest

from conftest import cli_env, ragassay_cli, write_project

pytestmark = pytest.mark.slow

CONFIG = """
    [project]
    name = "stopped"

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = { path = "qa.jsonl" }

    [systems.keyword]
    retriever = "keyword"
    generator = "extractive"
    options = { top_k = 2 }

    [systems.bm25]
    extends = "keyword"
    retriever = "bm25"

    [systems.top1]
    extends = "keyword"
    options = { top_k = 1 }

    [evaluation]
    metrics = ["token_recall", "context_mrr"]
    judges = ["match"]
    sequential = { batch = 1, max_samples = 2 }
"""


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """A 3-system project whose sequential run stops at its maximum of 2 of 3 samples: what ``run`` printed."""
    root = tmp_path_factory.mktemp("stopped")
    config = write_project(root, CONFIG)
    result = ragassay_cli("run", str(config), "--new", cwd=root, env=cli_env(COLUMNS="200"))
    assert result.returncode == 0, result.stderr
    run_id = re.search(r"run ([0-9a-f]{16}):", result.stderr).group(1)
    return root, run_id, result


def _cli(root, *args) -> str:
    result = ragassay_cli(*args, "-c", str(root), env=cli_env(COLUMNS="200"))
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_run_never_calls_a_comparison_at_its_maximum_settled(stopped):
    _, _, result = stopped
    assert "sequential: 0 of 6 comparisons settled, 6 not settled at the maximum (2 samples)" in result.stderr
    assert "not settled at the maximum of 2 samples;" in result.stdout
    assert "settled at 2" not in result.stdout and "6 of 6" not in result.stderr


def test_runs_says_the_run_stopped_early_and_how_many_comparisons_settled(stopped):
    root, run_id, _ = stopped
    (row,) = [r for r in json.loads(_cli(root, "runs", "--format", "json")) if r["run"] == run_id]
    assert row["state"].startswith("stopped early (sequential: 0 of 6 comparisons settled, 6 not settled")
    assert "once every comparison was settled" not in _cli(root, "runs")


def test_compare_json_of_a_stopped_run_has_no_fixed_n_interval_or_p_value(stopped):
    root, run_id, _ = stopped
    pairs = json.loads(_cli(root, "compare", run_id, "--format", "json"))["verdicts"]
    assert pairs and all(p["verdict"] == "sequential: not settled" for p in pairs)
    for pair in pairs:
        assert [pair[k] for k in ("ci_low", "ci_high", "level", "p_value", "p_holm", "mde")] == [None] * 6
        assert "not settled at the maximum of 2 samples" in pair["reason"] and "anytime-valid" in pair["reason"]


def test_outputs_a_stopped_run_never_ran_are_not_called_missing(stopped):
    root, run_id, _ = stopped
    text = _cli(root, "compare", run_id)
    assert "0 (1 not run: stopped early)" in " ".join(text.split()) and "+1 missing" not in text
    assert "nothing failed" in " ".join(text.split())
