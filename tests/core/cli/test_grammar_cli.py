"""``ragassay generate`` and ``ragassay report`` as a user meets them, on a copy of the Aurp example."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import REPO, ragassay_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def aurp(tmp_path_factory):
    """The Aurp example copied (results are written next to its config)."""
    target = tmp_path_factory.mktemp("aurp") / "aurp"
    shutil.copytree(
        REPO / "examples" / "aurp",
        target,
        ignore=shutil.ignore_patterns("*.db", "*.db-*", "__pycache__", ".ragassay-cache"),
    )
    return target


def test_dry_run_prints_m_n_q_per_template_and_writes_nothing(aurp, tmp_path):
    result = ragassay_cli("generate", str(aurp), "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "employee_by_role" in result.stdout and "Employee.Department (6), Employee.JobTitle (26)" in result.stdout
    total = next(line for line in result.stdout.splitlines() if "total (M = 12)" in line)
    assert [cell.strip() for cell in total.split("│")[4:7]] == ["342", "48", "1368"]  # Q, N, N x Q
    assert list(tmp_path.iterdir()) == []


def test_generate_streams_samples_and_documents_to_jsonl(aurp, tmp_path):
    out = tmp_path / "pairs.jsonl"
    result = ragassay_cli("generate", str(aurp), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert f"wrote 832 samples to {out}" in result.stderr and "wrote 50 documents" in result.stderr
    assert "multiple answers" in result.stdout  # the per-template summary of what was dropped
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 832 and len({r["group_id"] for r in rows}) == 208
    assert {"query_length", "text_template_id", "sql_template_id", "sql", "placeholders", "source_rows"} <= set(rows[0])
    docs = (tmp_path / "pairs.documents.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(docs) == 50 and json.loads(docs[0])["id"].startswith("corpus/")


def lexical_slice(aurp, tmp_path):
    """The example with its two lexical systems only (keyword, bm25): the same 832 samples and report, in seconds
    (the dense systems embed the corpus on the CPU, which the docs' fresh run and benchmarks/ measure)."""
    target = tmp_path / "aurp-lexical"
    shutil.copytree(aurp, target, ignore=shutil.ignore_patterns("*.db", "*.db-*", ".ragassay-cache"))
    config = (target / "ragassay.toml").read_text(encoding="utf-8")
    start, end = config.index("[systems.dense]"), config.index("[evaluation]")
    (target / "ragassay.toml").write_text(config[:start] + config[end:], encoding="utf-8")
    return target


def test_run_then_report_on_aurp(aurp, tmp_path):
    folder = lexical_slice(aurp, tmp_path)
    run = ragassay_cli("run", str(folder), timeout=600)
    assert run.returncode == 0, run.stderr
    assert "1664 units done" in run.stderr and "judge:match" in run.stdout
    report = ragassay_cli("report", "--config", str(folder))
    assert report.returncode == 0, report.stderr
    markdown = ragassay_cli("report", "--config", str(folder), "--format", "markdown").stdout  # cells never folded
    for expected in (
        "verdicts, run",
        "semantic groups",
        "robust: every phrasing answered correctly",
        "keyword matching is not robust to long queries",
        "Unbalanced Sampling (US)",
        "Stratified Sampling (SS)",
        "+Modular Evaluation (Retrieval)",
        "which module the wrong answers are blamed on",
    ):
        assert expected in report.stdout or expected in markdown, expected
    assert "Eq. " not in report.stdout and "lambda" not in report.stdout
    (data,) = json.loads(ragassay_cli("report", "--config", str(folder), "--json").stdout)
    grammar = data["grammar"]
    assert [s["system"] for s in grammar["systems"]] == ["keyword", "bm25"]
    for system in grammar["systems"]:
        overall = system["overall"]
        assert overall["total"] == 832 and sum(overall["groups"].values()) == 208
        assert overall["accuracy"] == pytest.approx(overall["correct"] / 832)
        rows = system["hypotheses"][0]["rows"]
        assert len(rows) == 9 and rows[0]["robust"]["total"] == rows[0]["non_robust"]["total"] == 416


def test_bad_input_gives_one_line_and_exit_2(aurp, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(aurp, broken, ignore=shutil.ignore_patterns("*.db", "*.db-*"))
    config = broken / "ragassay.toml"
    config.write_text(config.read_text().replace('sql_dump = "aurp.sql"', 'path = "missing.db"'))
    cases = {
        ("generate", str(broken), "--dry-run"): "database file not found",
        ("report", "--config", str(broken)): "no results database",
    }
    for args, expected in cases.items():
        result = ragassay_cli(*args)
        assert result.returncode == 2 and result.stderr.startswith(
            "error: grammar: " if "generate" in args else "error: "
        ), result.stderr
        assert expected in result.stderr and "Traceback" not in result.stderr
    templates = broken / "templates.yaml"
    config.write_text(config.read_text().replace('path = "missing.db"', 'sql_dump = "aurp.sql"'))
    templates.write_text(templates.read_text().replace("[Project.Name]", "[Project.Title]", 1))
    result = ragassay_cli("generate", str(broken), "--dry-run")
    assert result.returncode == 2 and "template 'project_location'" in result.stderr
    assert "table Project has no column 'Title'" in result.stderr
