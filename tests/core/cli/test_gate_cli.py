"""``ragassay gate``: a real project on disk, run by the real CLI in a subprocess; exit 0 / 1 / 2.

The system under evaluation is the user's own code (the ``python`` adapter): ``scripted.py`` in the project
answers right, wrong on every sample, or wrong on one sample, and logs each call so a resumed gate can be
seen to make none.
"""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from conftest import cli_env, ragassay_cli, write_project

N = 30
QA = [
    {
        "question_id": f"q{i:02d}",
        "question": f"What is the code word number {i}?",
        "reference_answers": [f"word{i} alpha{i}"],
    }
    for i in range(N)
]
SCRIPTED = """
import json, pathlib, re

from ragassay import RAGOutput, TokenUsage

LOG = pathlib.Path(__file__).with_name("calls.log")


def _number(question):
    return int(re.search(r"number (\\d+)", question).group(1))


def _answer(text):
    with LOG.open("a") as log:
        log.write("call\\n")
    usage = TokenUsage(input_tokens=100, output_tokens=10, calls=1)
    usage = usage.model_copy(update={"by_model": {"openai/gpt-4o-mini": usage}})
    return RAGOutput(answer=text, usage=usage)


def good(question):
    i = _number(question)
    return _answer(f"word{i} alpha{i}")


def bad(question):
    return _answer("I do not know")


def noisy(question):
    i = _number(question)
    return _answer("I do not know" if i == 7 else f"word{i} alpha{i}")
"""
CONFIG = """
    [project]
    name = "gated"

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [systems."{name}"]
    rag = {{ name = "python", options = {{ callable = "scripted:{function}", path = ["."] }} }}

    [evaluation]
    metrics = ["exact_match", "token_recall"]
"""


def project(root, function: str = "good", name: str = "rag"):
    config = write_project(root, CONFIG.format(function=function, name=name), qa=QA)
    (root / "scripted.py").write_text(SCRIPTED, encoding="utf-8")
    return config


def set_function(root, function: str, name: str = "rag") -> None:
    (root / "ragassay.toml").write_text(textwrap.dedent(CONFIG.format(function=function, name=name)), "utf-8")


def calls(root) -> int:
    log = root / "calls.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def run_id_of(result) -> str:
    return result.stderr.split("run ")[1].split(":")[0]


def gate(root, *args):
    return ragassay_cli("gate", str(root), *args, cwd=root, env=cli_env(COLUMNS="100"))


@pytest.fixture(scope="module")
def main_run(tmp_path_factory):
    """A project whose main-branch run (the good system) is stored; (root, run id)."""
    root = tmp_path_factory.mktemp("gate")
    project(root)
    result = ragassay_cli("run", str(root), "-q", cwd=root)
    assert result.returncode == 0, result.stderr
    return root, run_id_of(result)


@pytest.fixture
def branch(main_run, tmp_path):
    """A copy of the project (a pull-request checkout) with main's results database as the CI cache left it."""
    root = tmp_path / "branch"
    shutil.copytree(main_run[0], root)
    shutil.copy(root / "ragassay-results.db", tmp_path / "main.db")
    (root / "calls.log").unlink()
    return root, main_run[1], tmp_path / "main.db"


def test_unchanged_config_passes_and_makes_no_call(branch):
    root, run_id, _ = branch
    result = gate(root, "--baseline", run_id[:8], "--summary", "summary.md")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = (root / "summary.md").read_text()
    assert summary.startswith("## ✅ ragassay gate: no regression (nothing differs")
    assert "the baseline is the candidate run itself" in summary
    assert calls(root) == 0  # the stored run was resumed, nothing recomputed


def test_clear_regression_exits_1_and_names_it(branch):
    root, run_id, _ = branch
    set_function(root, "bad")
    result = gate(root, "--baseline", run_id, "--summary", "summary.md", "--format", "markdown")
    assert result.returncode == 1, result.stderr
    summary = (root / "summary.md").read_text()
    assert result.stdout == summary
    assert summary.startswith("## ❌ ragassay gate: 2 regressions in 2 comparisons")
    assert "Mode **non-inferiority**" in summary and "margin 0.02 of each metric's range" in summary
    assert "- **rag** on **exact_match**: 1.000 → 0.000 (-1.000 [-1.000, -1.000] (97.5% CI), margin 0.02" in summary
    assert "| exact_match ↑ | 1.000 | 0.000 | -1.000 [-1.000, -1.000] (97.5% CI) | 0.02 | < 0.001 | 30 | ❌ " in summary
    assert calls(root) == N
    # a second gate resumes the stored candidate run: no call, the same summary
    again = gate(root, "--baseline", run_id, "--summary", "again.md", "--quiet")
    assert again.returncode == 1 and again.stdout == ""  # --quiet: one line, the headline (docs/ci.md)
    (line,) = again.stderr.splitlines()
    assert line.startswith("ragassay gate: 2 regressions in 2 comparisons (candidate run ")
    assert calls(root) == N and (root / "again.md").read_text() == summary


def test_a_small_drop_on_few_samples_is_inconclusive_and_fails_by_default(branch):
    root, run_id, _ = branch
    set_function(root, "noisy")  # wrong on 1 of 30: 30 samples cannot show the drop is within 2 points
    result = gate(root, "--baseline", run_id, "--format", "json")
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["exit_code"] == 1 and data["regressions"] == 0 and data["inconclusive_pairs"] == 2
    row = next(r for r in data["rows"] if r["metric"] == "exact_match")
    assert row["mean_diff"] == pytest.approx(-1 / N) and row["outcome"] == "inconclusive" and row["n"] == N
    assert row["ci_low"] < -row["margin"] and row["ci_high"] == 0.0 and row["needed"] > N
    assert gate(root, "--baseline", run_id, "--on-inconclusive", "pass", "-q").returncode == 0
    assert gate(root, "--baseline", run_id, "--mode", "superiority", "-q").returncode == 0
    assert gate(root, "--baseline", run_id, "--margin", "0.5", "-q").returncode == 0  # half the range: shown within


def test_baseline_in_another_database_the_ci_cache_case(branch):
    root, run_id, main_db = branch
    (root / "ragassay-results.db").unlink()  # a fresh pull-request checkout: only main's cached results
    set_function(root, "bad")
    result = gate(root, "--baseline", str(main_db), "--html", "report.html", "--report-url", "https://ci/r (1).html")
    assert result.returncode == 1, result.stderr
    text = " ".join(result.stdout.split())
    assert f"against baseline run `{run_id[:12]}` from {main_db}" in text
    assert "[HTML report](https://ci/r%20%281%29.html)" in text
    assert (root / "report.html").read_text().startswith("<!DOCTYPE html>")
    explicit = gate(root, "--baseline", f"{main_db}#{run_id[:6]}", "--quiet")
    assert explicit.returncode == 1, explicit.stderr


def test_cost_delta_and_renamed_system_are_reported(branch):
    root, run_id, main_db = branch
    set_function(root, "good", name="rag|`v2`")  # a renamed system, with markdown in its name
    config = (root / "ragassay.toml").read_text()
    (root / "ragassay.toml").write_text(config + '\n[systems.rag]\nextends = "rag|`v2`"\n', "utf-8")
    result = gate(root, "--baseline", str(main_db), "--format", "markdown")
    assert result.returncode == 0, result.stderr
    summary = result.stdout
    assert "- system rag\\|\\`v2\\` is new (not in the baseline run): not compared" in summary
    assert "| generation input tokens | 3,000 | 3,000 | +0 (+0%) |" in summary
    assert "| generation model calls | 30 | 30 | +0 (+0%) |" in summary
    assert "| generation cost $ | 0.0006 | 0.0006 | +0.0000 (+0%) |" in summary
    assert "| rag | 0 → 0 | 0 → 0 | 0 → 0 |" in summary


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--baseline", "nothere.db"), "--baseline: no results database at nothere.db"),
        (("--baseline", "feedbeef"), "run 'feedbeef' not found"),
        (("--baseline", "x.db#"), "--baseline 'x.db#' is incomplete"),
        (("--metric", "nope"), "the gate's decision family names nope, which neither run scored"),
        (("--alpha", "2"), "Invalid value for '--alpha'"),
    ],
)
def test_errors_exit_2_with_one_line(branch, args, message):
    root, run_id, _ = branch
    if "--baseline" not in args:
        args = ("--baseline", run_id, *args)
    result = gate(root, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    if "--alpha" not in args:
        assert len(result.stderr.strip().splitlines()[-1:]) == 1 and result.stderr.strip().splitlines()[-1].startswith(
            "error: "
        )


def test_no_shared_samples_exit_2(branch, tmp_path):
    root, run_id, main_db = branch
    other = [dict(sample, question_id=f"other-{sample['question_id']}") for sample in QA]
    write_project(root, CONFIG.format(function="good", name="rag"), qa=other)
    result = gate(root, "--baseline", str(main_db))
    assert result.returncode == 2
    assert "shares no question_id with this config's 30 samples" in result.stderr and "Traceback" not in result.stderr
    assert "nothing was run" in result.stderr and calls(root) == 0  # checked before anything ran


def test_ci_recipe_parses_and_uses_real_gate_options():
    import re
    import shlex

    import yaml

    from ragassay.cli.gate_cmd import gate_command

    from conftest import REPO

    recipe = (REPO / "docs" / "examples" / "ragassay-gate.yml").read_text(encoding="utf-8")
    page = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    assert re.search(r"```yaml\n(.*?)```", page, re.S).group(1) == recipe  # the page shows the file
    steps = yaml.safe_load(recipe)["jobs"]["evaluate"]["steps"]
    runs = " ".join(step.get("run", "") for step in steps)
    gate_line = next(step["run"] for step in steps if "ragassay gate" in step.get("run", ""))
    args = shlex.split(gate_line.split("ragassay gate", 1)[1])
    known = {opt for param in gate_command.params for opt in param.opts}
    options = [a for a in args if a.startswith("--")]
    assert options and set(options) <= known, set(options) - known
    parsed = gate_command.make_context("gate", args)  # every value is accepted by the real command
    summary, html = parsed.params["summary_path"], parsed.params["html_path"]
    assert f"--body-file {summary}" in runs and "GITHUB_STEP_SUMMARY" in runs
    uses = [step.get("uses", "") for step in steps]
    assert any(u.startswith("actions/upload-artifact") for u in uses)
    assert next(s for s in steps if "upload-artifact" in s.get("uses", ""))["with"]["path"] == str(html)
    caches = [s for s in steps if s.get("uses", "").startswith("actions/cache")]
    cached = {path for s in caches for path in s["with"]["path"].split()}
    assert {"ragassay-results.db", ".ragassay-cache", "baseline"} <= cached
    assert parsed.params["baseline"].startswith("baseline/")
    assert "ragassay run" in runs and any("save" in s["uses"] for s in caches)
    assert all(
        "${{ github.head_ref || github.ref_name }}" in s["with"]["key"]
        for s in caches
        if "results" in s["with"]["path"]
    )


def top_k_project(root, top_k: int):
    """21 questions; for 4 of them a distractor shares more words with the question than the gold document."""
    corpus = {f"d{i:02d}.md": f"crate{i} is kept in the north warehouse." for i in range(21)}
    corpus |= {f"x{i:02d}.md": f"crate{i} is kept near bay{i}: see the inventory list" for i in range(4)}
    qa = [
        {
            "question_id": f"q{i:02d}",
            "question": f"Where is crate{i} kept near bay{i}?",
            "reference_answers": ["the north warehouse"],
            "reference_context_ids": [f"corpus/d{i:02d}.md"],
        }
        for i in range(21)
    ]
    config = f"""
    [project]
    name = "depth"
    results = "../results.db"

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [systems.keyword]
    retriever = "keyword"
    generator = "extractive"
    options = {{ top_k = {top_k} }}

    [evaluation]
    metrics = ["token_recall", "k_precision", "exact_match", "contains_answer", "context_mrr", "recall_at_k"]
    judges = ["match"]
    """
    return write_project(root, config, qa=qa, docs=corpus)


def test_the_issues_top_k_drop_fails_the_default_gate_and_an_unchanged_config_passes(tmp_path):
    main = top_k_project(tmp_path / "main", 3).parent
    first = ragassay_cli("run", str(main), "-q", cwd=main)
    assert first.returncode == 0, first.stderr
    base = run_id_of(first)
    unchanged = gate(main, "--baseline", base)
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
    branch = top_k_project(tmp_path / "branch", 1).parent
    result = gate(branch, "--baseline", base, "--format", "json")
    assert result.returncode == 1, result.stdout + result.stderr
    data = json.loads(result.stdout)
    recall = next(r for r in data["rows"] if r["metric"] == "recall_at_k")
    assert (recall["baseline_mean"], recall["candidate_mean"]) == pytest.approx((1.0, 17 / 21))
    assert recall["outcome"] == "inconclusive" and recall["n_discordant"] == 4
    assert "too few samples to tell" in recall["reason"] and recall["needed"] > 21
    assert not any(r["metric"] in ("k_precision", "exact_match") for r in data["rows"])  # constant: not in the family
    text = gate(branch, "--baseline", base, "--format", "markdown").stdout
    assert "**keyword** on **recall\\_at\\_k**" in text or "**keyword** on **recall_at_k**" in text
    assert gate(branch, "--baseline", base, "--mode", "superiority", "-q").returncode == 0  # the old behaviour
