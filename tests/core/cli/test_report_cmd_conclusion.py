"""``ragassay report`` opens with the conclusion, and ``compare`` puts it at the head of its verdict part (issue
38, item 13), on the issue's project (32 questions, 3 systems, GRAMMAR groups)."""

from __future__ import annotations

import pytest
from conclusion_project import write_and_run

from conftest import cli_env, ragassay_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def issue_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("report-conclusion")
    _, run_id = write_and_run(root)
    return root, run_id


def _stdout(*args: str) -> list[str]:
    result = ragassay_cli(*args, env=cli_env(COLUMNS="250"))
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_terminal_report_opens_with_the_conclusion(issue_project):
    root, run_id = issue_project
    lines = _stdout("report", run_id, "-c", str(root))
    assert lines[0].startswith(f"report of run {run_id[:12]}") and lines[1] == f"conclusion, run {run_id[:8]}:"
    head = lines[: lines.index(next(line for line in lines if line.startswith("comparison: mean")))]
    assert any(line.startswith("  Fix first: the language model") for line in head)
    assert any(line.startswith("  Cannot be decided yet") for line in head)
    assert sum(line.startswith("conclusion, run") for line in lines) == 1  # said once, first


def test_compare_heads_its_verdicts_with_the_conclusion(issue_project):
    root, run_id = issue_project
    lines = _stdout("compare", run_id, "-c", str(root))
    start = lines.index(f"conclusion, run {run_id[:8]}:")
    verdicts = next(i for i, line in enumerate(lines) if line.startswith(f"verdicts, run {run_id[:8]}"))
    assert start < verdicts and all(line.startswith("  ") for line in lines[start + 1 : verdicts])
    assert sum("Too few differing samples" in line for line in lines) == 1
