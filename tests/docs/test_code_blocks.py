"""Every code block of every docs page and of README.md is executed, parsed or validated (one test per page).

python blocks of a page run in order in one namespace; bash and console blocks run with bash; all of them in
a temporary copy of ``examples/`` where ``ragassay run quickstart`` has already been run once (so reading
results works and running it again resumes in a second). toml blocks are parsed, and whole configs are
validated with the config loader. ``text`` blocks are output and are skipped; ``norun="reason"`` skips a block
that cannot run in a test.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from code_blocks import NORUN_HINT, RUNNABLE, offline_environment, problem_with_info, read_blocks, run_block

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md")) + ["README.md"]
IGNORED = shutil.ignore_patterns("ragassay-results.db*", ".ragassay-cache", "__pycache__", "*.faiss")

# the quickstart's dense system embeds with the local MiniLM model before any page runs
pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def examples_template(tmp_path_factory) -> Path:
    """A copy of examples/ with the quickstart already run once."""
    folder = tmp_path_factory.mktemp("docs") / "examples"
    shutil.copytree(REPO / "examples", folder, ignore=IGNORED)
    result = subprocess.run(
        ["ragassay", "run", "quickstart", "--quiet"],
        cwd=folder,
        env=offline_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"ragassay run quickstart failed:\n{result.stdout}\n{result.stderr}"
    return folder


@pytest.fixture
def examples(examples_template, tmp_path, monkeypatch) -> Path:
    """A fresh copy of the template for one page, made the working directory, offline."""
    folder = tmp_path / "examples"
    shutil.copytree(examples_template, folder)
    monkeypatch.chdir(folder)
    for key, value in offline_environment().items():
        monkeypatch.setenv(key, value)
    return folder


@pytest.mark.parametrize("page", PAGES)
def test_code_blocks_of_page(page, examples):
    blocks = read_blocks(REPO / page, page)
    problems = [p for p in map(problem_with_info, blocks) if p]
    assert not problems, "\n".join(problems)
    namespace = {"__name__": "__docs__"}
    for block in blocks:
        if block.language not in RUNNABLE or "norun" in block.attributes:
            continue
        try:
            run_block(block, namespace, examples)
        except Exception as exc:
            raise AssertionError(f"{block.where} failed: {type(exc).__name__}: {exc}\n{NORUN_HINT}") from exc
