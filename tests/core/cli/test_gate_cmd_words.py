"""What ``ragassay gate`` says (issue 38, items 12 and 13): ``--quiet`` prints nothing when the gate passes and
one line on stderr when it fails (docs/ci.md); the summary opens with the conclusion in plain words, and a count
of one is singular ("in 1 comparison")."""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import REPO, ragassay_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def top_k(tmp_path_factory):
    """examples/top_k copied, its baseline run (top 3 contexts) stored; returns (folder, baseline run id)."""
    root = tmp_path_factory.mktemp("gate-words") / "top_k"
    shutil.copytree(REPO / "examples" / "top_k", root, ignore=shutil.ignore_patterns("*.db*"))
    result = ragassay_cli("run", str(root), "-q")
    assert result.returncode == 0, result.stderr
    return root, re.search(r"run ([0-9a-f]{16}):", result.stderr).group(1)


def test_quiet_says_nothing_when_the_gate_passes(top_k):
    root, baseline = top_k
    result = ragassay_cli("gate", str(root), "--baseline", baseline, "-q")
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""


def test_quiet_says_one_line_when_the_gate_fails(top_k):
    root, baseline = top_k
    result = ragassay_cli("gate", str(root / "top1.toml"), "--baseline", baseline, "-q")
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("ragassay gate: 2 inconclusive in 5 comparisons (candidate run ")


def test_the_summary_opens_with_the_conclusion_and_counts_one_in_the_singular(top_k, tmp_path):
    root, baseline = top_k
    summary = tmp_path / "summary.md"
    args = ("gate", str(root / "top1.toml"), "--baseline", baseline, "--metric", "recall_at_k")
    result = ragassay_cli(*args, "--summary", str(summary), "-q")
    assert result.returncode == 1
    headline, conclusion = summary.read_text(encoding="utf-8").split("\n\n")[:2]
    assert headline == "## ❌ ragassay gate: 1 inconclusive in 1 comparison"
    assert conclusion.startswith("**In short:** Nothing is shown better or worse than the baseline run on these 21")
    assert "Cannot be decided yet (the samples cannot tell): keyword on recall_at_k. About " in conclusion
    assert "samples would settle it" in conclusion
