"""The CLI as a user meets it: real subprocesses, exit codes, one-line errors, tables."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from conftest import QA, cli_env, ragassay_cli, write_project


def test_help_is_fast_and_imports_nothing_heavy():
    code = (
        "import sys, ragassay.cli.main as m\n"
        "heavy = [x for x in ('pydantic', 'sqlalchemy', 'rich', 'pluggy', 'rank_bm25', 'langchain_text_splitters',"
        " 'torch', 'numpy') if x in sys.modules]\nprint(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    result = ragassay_cli("--help")
    assert result.returncode == 0 and "compare" in result.stdout and "plugins" in result.stdout


def test_every_command_is_listed_and_only_the_one_asked_for_is_imported():
    import importlib
    import pkgutil

    import ragassay.cli
    from ragassay.cli.main import COMMAND_MODULES

    defined = {}
    for info in pkgutil.iter_modules(ragassay.cli.__path__):
        module = importlib.import_module(f"ragassay.cli.{info.name}")
        if info.name.endswith("_cmd") and info.name != "traces_results_cmd":  # traces' subcommands
            defined |= {command.name: info.name for command in module.COMMANDS}
    assert COMMAND_MODULES == defined
    code = (
        "import sys\nfrom ragassay.cli.main import cli\n"
        "assert cli.get_command(None, 'nothing') is None and cli.get_command(None, 'run').name == 'run'\n"
        "print(sorted(m for m in sys.modules if m.endswith('_cmd')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['ragassay.cli.run_cmd']"
    listed = ragassay_cli("--help").stdout
    assert all(name in listed for name in COMMAND_MODULES)


def test_a_quiet_run_imports_no_numpy_or_rich_before_its_first_call():
    # what `ragassay run -q` imports before its first model call (the API, the runner, every plugin) and after
    # its last (the returned run's handle): numpy, pandas and rich wait for the verdicts and tables
    code = (
        "import sys, ragassay.api, ragassay.cli.run_cmd, ragassay.notebook\n"
        "from ragassay.plugin_manager import get_plugin_host\n"
        "assert not get_plugin_host().failures\n"
        "print([x for x in ('numpy', 'pandas', 'rich', 'scipy') if x in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    from ragassay import results

    assert results.read_run.__module__ == "ragassay.results.read" and "RunData" in dir(results)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        results.nothing  # noqa: B018


def test_the_run_path_imports_no_sqlalchemy_until_the_store_is_opened():
    # SQLAlchemy is imported when the store opens (ragassay.store exports its names on first use)
    code = (
        "import sys, ragassay.api, ragassay.engine.runner, ragassay.cli.run_cmd, ragassay.llm.client, ragassay.store\n"
        "import ragassay.llm.generator, ragassay.engine.estimate.stored\n"
        "print([m for m in sys.modules if m.startswith('sqlalchemy')])\n"
        "from ragassay.store import open_store, ResultsStore\n"
        "print(open_store.__module__, ResultsStore.__module__, 'sqlalchemy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "ragassay.store.connect ragassay.store.database True"]


def test_init_writes_a_valid_starter_and_refuses_to_overwrite(tmp_path):
    result = ragassay_cli("init", str(tmp_path))
    assert result.returncode == 0, result.stderr
    from ragassay.config import load_config

    loaded = load_config(tmp_path)
    assert set(loaded.config.systems) == {"keyword", "bm25"}
    again = ragassay_cli("init", str(tmp_path))
    assert again.returncode == 2
    assert again.stderr.startswith("error: ") and "already exists" in again.stderr and "Traceback" not in again.stderr


def test_run_compare_runs_show(project):
    result = ragassay_cli("run", str(project), cwd=project.parent)
    assert result.returncode == 0, result.stderr
    assert "units done" in result.stderr and "0 failed" in result.stderr
    assert "token_recall" in result.stdout and "keyword" in result.stdout and "bm25" in result.stdout
    run_id = sqlite3.connect(project.parent / "ragassay-results.db").execute("select id from runs").fetchone()[0]

    runs = ragassay_cli("runs", "--config", str(project))
    assert runs.returncode == 0 and run_id in runs.stdout and "complete" in runs.stdout

    compare = ragassay_cli("compare", run_id[:6], "--config", str(project))
    assert compare.returncode == 0 and "judge:match" in compare.stdout

    show = ragassay_cli("show", run_id, "q2", "--config", str(project))
    assert show.returncode == 0 and "Who fished salmon" in show.stdout and "token_recall" in show.stdout
    data = json.loads(
        ragassay_cli("show", run_id, "q2", "--json", "--db", str(project.parent / "ragassay-results.db")).stdout
    )
    assert data["sample"]["reference_answers"] == ["O'Brien"]
    assert {o["system"] for o in data["outputs"]} == {"keyword", "bm25"}
    # contexts are stored by key and shown with their texts
    assert all(any("O'Brien fished salmon" in c for c in o["output"]["contexts"]) for o in data["outputs"])

    again = ragassay_cli("run", str(project))
    assert again.returncode == 0 and "resuming run" in again.stderr and "(6 already done)" in again.stderr


def test_bad_inputs_give_one_line_and_exit_2(project, tmp_path):
    cases = {
        ("run", str(tmp_path / "missing.toml")): "config file not found",
        ("compare", "nope", "--config", str(project)): "no results database",
        ("runs", "--db", str(tmp_path / "none.db")): "no results database",
    }
    for args, expected in cases.items():
        result = ragassay_cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith("error: ") and expected in result.stderr
        assert "Traceback" not in result.stderr
    bad = project.parent / "ragassay.toml"
    bad.write_text(bad.read_text().replace('retriever = "bm25"', 'retriever = "bm52"'))
    result = ragassay_cli("run", str(project))
    assert result.returncode == 2
    assert "systems.bm25.retriever: no retriever named 'bm52'. Did you mean 'bm25'?" in result.stderr
    debug = ragassay_cli("--debug", "run", str(project))
    assert debug.returncode == 2 and "Traceback" in debug.stderr


def test_bad_dataset_line_is_reported_and_stored_results_survive(tmp_path):
    path = write_project(
        tmp_path,
        """
        [corpus]
        paths = ["corpus/*"]
        [dataset]
        options = { path = "qa.jsonl" }
        [systems.k]
        retriever = "keyword"
        generator = "extractive"
    """,
    )
    assert ragassay_cli("run", str(path), "-q").returncode == 0
    db = tmp_path / "ragassay-results.db"
    before = sqlite3.connect(db).execute("select count(*) from outputs").fetchone()
    with open(tmp_path / "qa.jsonl", "a", encoding="utf-8") as handle:
        handle.write("{not json\n")
    result = ragassay_cli("run", str(path))
    assert result.returncode == 2 and f"line {len(QA) + 1}" in result.stderr
    assert sqlite3.connect(db).execute("select count(*) from outputs").fetchone() == before


def test_plugins_lists_components_with_origin(tmp_path):
    result = ragassay_cli("plugins")
    assert result.returncode == 0
    assert "bm25" in result.stdout and "ragassay 0.1.0" in result.stdout
    data = json.loads(ragassay_cli("plugins", "--json").stdout)
    names = {(c["kind"], c["name"]) for c in data["components"]}
    assert {("retriever", "keyword"), ("rag", "naive"), ("metric", "context_mrr"), ("judge", "match")} <= names
    assert data["failures"] == []


def test_results_database_elsewhere_via_url(tmp_path):
    path = write_project(
        tmp_path,
        """
        [project]
        results = "sqlite:///%s"
        [corpus]
        paths = ["corpus/*"]
        [dataset]
        options = { path = "qa.jsonl" }
        [systems.k]
        retriever = "keyword"
        generator = "extractive"
    """
        % (tmp_path / "elsewhere" / "r.db"),
    )
    assert ragassay_cli("run", str(path), "-q", env=cli_env()).returncode == 0
    assert (tmp_path / "elsewhere" / "r.db").exists()
