"""``ragassay gate --labelled METRIC=RUBRIC --labels FILE`` end to end: a real project run twice by the real CLI in
a subprocess, people's labels of both runs in a labels export; exit 0 when people's labels show no drop, 1 when
they show the regression the metric cannot see."""

from __future__ import annotations

import json

import pytest

from conftest import cli_env, ragassay_cli, write_project

N, LABELLED = 30, 20
QA = [
    {"question_id": f"q{i:02d}", "question": f"What is the code word number {i}?", "reference_answers": [f"w{i} a{i}"]}
    for i in range(N)
]
SCRIPTED = """
import re

from ragassay import RAGOutput


def _number(question):
    return int(re.search(r"number (\\d+)", question).group(1))


def good(question):
    i = _number(question)
    return RAGOutput(answer=f"w{i} a{i}")


def dotted(question):
    i = _number(question)
    return RAGOutput(answer=f"w{i} a{i}.")


def shaky(question):
    i = _number(question)
    return RAGOutput(answer=f"not w{i} a{i}" if i % 2 == 0 else f"w{i} a{i}")
"""
CONFIG = """
    [project]
    name = "gated"

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [systems.rag]
    rag = {{ name = "python", options = {{ callable = "scripted:{function}", path = ["."] }} }}

    [evaluation]
    metrics = ["token_recall"]
"""


def configure(root, function: str) -> None:
    write_project(root, CONFIG.format(function=function), qa=QA)
    (root / "scripted.py").write_text(SCRIPTED, encoding="utf-8")


def run(root) -> str:
    result = ragassay_cli("run", str(root), "-q", cwd=root)
    assert result.returncode == 0, result.stderr
    return result.stderr.split("run ")[1].split(":")[0]


def labels(run_id: str, correct) -> list[str]:
    """People's labels of the first LABELLED answers (no digest: each names the run it was given on)."""
    return [
        json.dumps({"run_id": run_id, "sample_id": f"q{i:02d}", "system": "rag", "rubric": "correct",
                    "rubric_version": 1, "annotator": "ann", "value": float(correct(i)), "labelled_at": float(i)})
        for i in range(LABELLED)
    ]  # fmt: skip


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate-labelled")
    configure(root, "good")
    return root, run(root)


@pytest.mark.parametrize(
    "function,correct,code",
    [("dotted", lambda i: True, 0), ("shaky", lambda i: i % 2 == 1, 1)],
)
def test_gate_decides_on_peoples_labels(baseline, function, correct, code):
    root, base_id = baseline
    configure(root, function)
    candidate = run(root)  # the gate resumes this run: its labels can be written before the gate
    path = root / f"labels-{function}.jsonl"
    rows = labels(base_id, lambda i: True) + labels(candidate, correct)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ("gate", str(root), "--baseline", base_id, "--labelled", "token_recall=correct", "--labels", str(path))
    result = ragassay_cli(*args, "--format", "json", cwd=root, env=cli_env(COLUMNS="100"))
    assert result.returncode == code, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["candidate_run"] == candidate
    (row,) = data["rows"]
    (pair,) = data["ppi"]
    assert row["metric"] == "token_recall" and pair["labelled"] == LABELLED and pair["n"] == N
    assert pair["judge_mean"] == pytest.approx(0.0)  # the metric sees no change
    assert row["outcome"] == ("pass" if code == 0 else "regression")
    if code:
        assert pair["high"] < 0 and pair["estimate"] == pytest.approx(-0.5, abs=0.1)
    counts = {(c["run_id"], c["rubric"]): c for c in data["ppi_labels"]}
    assert counts[(candidate, "correct")]["used"] == counts[(base_id, "correct")]["used"] == LABELLED
    summary = ragassay_cli(*args, "--format", "markdown", cwd=root, env=cli_env(COLUMNS="100"))
    assert summary.returncode == code
    assert "### Decided on people's labels (prediction-powered)" in summary.stdout
    assert f"labels of correct on run {candidate[:12]}: {LABELLED} label(s) used" in summary.stdout
