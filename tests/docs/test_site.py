"""The docs site: generated references are up to date, and ``mkdocs build --strict`` passes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from ragassay import hookspecs
from ragassay.config import Config

REPO = Path(__file__).resolve().parents[2]


def test_generated_references_are_up_to_date():
    result = subprocess.run(
        [sys.executable, str(REPO / "docs" / "gen" / "generate.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_config_reference_has_every_section_and_key():
    page = (REPO / "docs" / "reference" / "config.md").read_text(encoding="utf-8")
    for heading in ("[project]", "[project.ray]", "[systems.NAME]", "[llm.prices.NAME]", "[[analysis.hypotheses]]"):
        assert f"`{heading}`" in page, heading
    for name in Config.model_fields["project"].annotation.model_fields["ray"].annotation.model_fields:
        assert f"| `{name}` |" in page, name


def test_hook_reference_has_every_hook_with_its_docstring():
    page = (REPO / "docs" / "reference" / "hooks.md").read_text(encoding="utf-8")
    for hook in hookspecs.HOOK_KINDS:
        assert f"### `{hook}(register)`" in page
        assert ":param register:" in page


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (the [test] extra)")
def test_mkdocs_build_strict(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "reference" / "config" / "index.html").exists()
