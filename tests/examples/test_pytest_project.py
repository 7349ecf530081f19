"""examples/pytest_project: its own test suite, run with pytest in a subprocess on a copy, passes; with a
regression introduced into its config it fails, printing the verdict."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pytest_project"
REGRESSION = 'retriever = "bm25"\noptions = { top_k = 1 }\nchunker = { name = "recursive", options = { size = 60, overlap = 0 } }'


def run_example(folder: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path) -> Path:
    target = tmp_path / "pytest_project"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("ragassay-results.db", "__pycache__", ".*"))
    return target


@pytest.mark.slow
def test_example_project_passes(project):
    done = run_example(project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout
    assert (project / "ragassay-results.db").is_file()


@pytest.mark.slow
def test_a_regression_fails_with_the_verdict(project):
    config = project / "ragassay.toml"
    text = config.read_text(encoding="utf-8")
    assert 'retriever = "bm25"' in text
    config.write_text(text.replace('retriever = "bm25"', REGRESSION), encoding="utf-8")
    done = run_example(project)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "FAILED tests/test_rag_quality.py::test_bm25_is_no_worse_than_keyword[token_recall]" in output
    assert "regression on token_recall: bm25 against keyword (non-inferiority, margin 0.2)" in output
    assert "0.8750 -> 0.5194, difference -0.3556" in output
    assert "samples where bm25 got worse (question id: keyword -> bm25, question, answer):" in output
    assert "def assert_no_regression" not in output  # the message, not the helper's source


def test_entry_point_or_conftest_loads_the_plugin():
    """The example's conftest loads the plugin only where the entry point does not (loading both fails)."""
    installed = any(ep.name == "ragassay" for ep in entry_points(group="pytest11"))
    conftest = (EXAMPLE / "conftest.py").read_text(encoding="utf-8")
    assert 'pytest_plugins = [] if INSTALLED else ["ragassay.testing.pytest_plugin"]' in conftest or installed
