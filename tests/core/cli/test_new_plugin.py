"""``ragassay new-plugin``: the package it writes installs, registers its component and passes its own tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli
from ragassay.plugin_starter import KINDS, MAX_NAME_LENGTH

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[3]


def new_plugin(*args: str):
    return CliRunner().invoke(cli, ["new-plugin", *args])


def clean_env() -> dict[str, str]:
    """The environment without ragassay switches or a PYTHONPATH that could hide what is installed."""
    return {
        k: v
        for k, v in os.environ.items()
        if (not k.startswith("RAGASSAY_") or k == "RAGASSAY_PLUGIN_INDEX") and k != "PYTHONPATH"
    }


def run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout)


def test_writes_the_package_layout_with_its_entry_point(tmp_path):
    result = new_plugin("my-tfidf", "--kind", "retriever", "--dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    root = tmp_path / "ragassay-my-tfidf"
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == [
        ".gitignore",
        "README.md",
        "pyproject.toml",
        "src/ragassay_my_tfidf/__init__.py",
        "tests/conftest.py",
        "tests/test_my_tfidf.py",
    ]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "ragassay-my-tfidf"
    assert project["entry-points"]["ragassay"] == {"my_tfidf": "ragassay_my_tfidf"}
    assert 'retriever = "my_tfidf/my_tfidf"' in (root / "README.md").read_text(encoding="utf-8")
    assert "my_tfidf/my_tfidf" in result.output


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("My-Plugin", "is not usable"),
        ("2fast", "is not usable"),
        ("has space", "is not usable"),
        ("trailing-", "is not usable"),
        ("class", "is not usable"),
        ("ragassay-tfidf", "without it (ragassay new-plugin tfidf)"),
        ("a" * (MAX_NAME_LENGTH + 1), f"use at most {MAX_NAME_LENGTH}"),
    ],
)
def test_an_unusable_name_is_one_clear_error_with_exit_code_2(tmp_path, name, fragment):
    result = new_plugin(name, "--dir", str(tmp_path))
    assert result.exit_code == 2
    assert fragment in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_kind_is_refused(tmp_path):
    result = new_plugin("tfidf", "--kind", "vectorstore", "--dir", str(tmp_path))
    assert result.exit_code == 2 and "vectorstore" in result.output
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_needs_force_which_keeps_other_files(tmp_path):
    assert new_plugin("tfidf", "--dir", str(tmp_path)).exit_code == 0
    module = tmp_path / "ragassay-tfidf" / "src" / "ragassay_tfidf" / "__init__.py"
    module.write_text("# my edits\n", encoding="utf-8")
    (tmp_path / "ragassay-tfidf" / "NOTES.md").write_text("keep me\n", encoding="utf-8")
    refused = new_plugin("tfidf", "--kind", "metric", "--dir", str(tmp_path))
    assert refused.exit_code == 2 and "already exists" in refused.output and "--force" in refused.output
    assert module.read_text(encoding="utf-8") == "# my edits\n"
    assert new_plugin("tfidf", "--kind", "metric", "--dir", str(tmp_path), "--force").exit_code == 0
    assert "class TfidfMetric(Metric)" in module.read_text(encoding="utf-8")
    assert (tmp_path / "ragassay-tfidf" / "NOTES.md").read_text(encoding="utf-8") == "keep me\n"


def test_generated_files_pass_ruff_with_the_projects_rules(tmp_path):
    repo_rules = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    for kind in KINDS:
        name = f"long-{kind.replace('_', '-')}-".ljust(MAX_NAME_LENGTH, "x")  # lines stay within 120 up to this
        assert new_plugin(name, "--kind", kind, "--dir", str(tmp_path)).exit_code == 0
        root = tmp_path / f"ragassay-{name}"
        rules = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
        assert rules["line-length"] == repo_rules["line-length"]
        assert rules["lint"]["select"] == repo_rules["lint"]["select"]
        for check in (["check"], ["format", "--check"]):
            result = run([sys.executable, "-m", "ruff", *check, "--no-cache", "."], cwd=root)
            assert result.returncode == 0, f"{kind}: ruff {' '.join(check)}\n{result.stdout}{result.stderr}"


def test_the_generated_tests_catch_a_broken_component(tmp_path):
    assert new_plugin("overlap", "--dir", str(tmp_path)).exit_code == 0
    root = tmp_path / "ragassay-overlap"
    module = root / "src" / "ragassay_overlap" / "__init__.py"
    text = module.read_text(encoding="utf-8")
    assert "key=lambda item: (-item[0], item[1])" in text
    module.write_text(text.replace("key=lambda item: (-item[0], item[1])", "key=lambda item: item[1]"), "utf-8")
    result = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "test_ranks_chunks_by_shared_words" in result.stdout


def test_the_llm_judge_stands_on_the_public_base_and_its_tests_catch_a_broken_judge(tmp_path):
    result = new_plugin("agrees", "--kind", "llm_judge", "--dir", str(tmp_path))
    assert result.exit_code == 0 and "the LLM judge agrees/agrees" in result.output, result.output
    root = tmp_path / "ragassay-agrees"
    assert (root / "tests" / "loopback_model.py").is_file()
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(r.startswith("ragassay[openai]") for r in project["optional-dependencies"]["test"])
    module = root / "src" / "ragassay_agrees" / "__init__.py"
    text = module.read_text(encoding="utf-8")
    assert "from ragassay.llm import JudgeOptions, LLMJudging, fill, one_verdict" in text
    assert "class AgreesJudge(LLMJudging, Judge)" in text
    module.write_text(text.replace('"incorrect": 0.0}', '"incorrect": 1.0}'), encoding="utf-8")
    tests = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, timeout=300)
    assert tests.returncode == 1, tests.stdout + tests.stderr
    assert "1 failed, 7 passed" in tests.stdout and "test_the_verdict_and_explanation" in tests.stdout


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory) -> Path:
    """A new virtual environment that sees this environment's packages (ragassay, pytest, setuptools, pip).

    ``venv --system-site-packages`` exposes the base interpreter's packages, not those of the virtual
    environment the tests may run in, so a ``.pth`` file adds every site-packages folder this interpreter
    sees (with their own ``.pth`` files, which an editable ragassay needs). Nothing is downloaded.
    """
    root = tmp_path_factory.mktemp("venv")
    command = [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(root)]
    subprocess.run(command, check=True, capture_output=True)
    python = root / "bin" / "python"
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=root)
    outer = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]
    lines = "".join(f"import site; site.addsitedir({path!r})\n" for path in dict.fromkeys(outer))
    Path(site.stdout.strip(), "_outer_environment.pth").write_text(lines, encoding="utf-8")
    return python


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_installs_into_a_fresh_venv_registers_and_passes_its_tests(fresh_venv, tmp_path, kind):
    name = f"starter-{kind.replace('_', '-')}"
    plugin = name.replace("-", "_")
    assert new_plugin(name, "--kind", kind, "--dir", str(tmp_path)).exit_code == 0
    root = tmp_path / f"ragassay-{name}"
    python = str(fresh_venv)
    install = [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-cache-dir"]
    result = run([*install, "--disable-pip-version-check", str(root)], cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    tests = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, timeout=300)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout and "skipped" not in tests.stdout
    listed = run([python, "-m", "ragassay", "plugins", "--json"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    mine = [c for c in data["components"] if c["plugin"] == plugin]
    assert [(c["kind"], c["name"], c["distribution"]) for c in mine] == [
        (KINDS[kind].registers or kind, f"{plugin}/{plugin}", f"ragassay-{name}")
    ]
    assert data["failures"] == []
    assert all(option["description"] for option in mine[0]["option_list"])


def test_the_retriever_tutorial_works_as_written(tmp_path):
    """docs/tutorial-retriever.md: the changed ranking fails the one test it says, and passes once updated."""
    import re

    page = (REPO / "docs" / "tutorial-retriever.md").read_text(encoding="utf-8")
    module_code, test_code = re.findall(r"```python\n(.*?)```", page, re.S)
    assert new_plugin("idf", "--dir", str(tmp_path)).exit_code == 0
    root = tmp_path / "ragassay-idf"
    (root / "src" / "ragassay_idf" / "__init__.py").write_text(module_code, encoding="utf-8")
    pytest_args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    changed = run(pytest_args, cwd=root, timeout=300)
    assert changed.returncode == 1 and "1 failed, 3 passed" in changed.stdout, changed.stdout
    assert "FAILED tests/test_idf.py::test_ranks_chunks_by_shared_words" in changed.stdout
    tests = root / "tests" / "test_idf.py"
    text = tests.read_text(encoding="utf-8")
    old = re.search(r"def test_ranks_chunks_by_shared_words\(\):\n(?:    .*\n)+", text).group(0)
    text = "import math\n" + text.replace(old, test_code.split("\n\n\ndef test_a_rare")[0] + "\n")
    tests.write_text(text + "\n\n" + "def test_a_rare" + test_code.split("\n\n\ndef test_a_rare")[1], encoding="utf-8")
    updated = run(pytest_args, cwd=root, timeout=300)
    assert updated.returncode == 0 and "5 passed" in updated.stdout, updated.stdout + updated.stderr
