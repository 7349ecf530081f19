"""Plugins as a user installs them: a real pip-installed package, and a broken one."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import cli_env, ragassay_cli, write_project

pytestmark = pytest.mark.slow


def test_installed_plugin_is_listed_and_broken_ones_are_reported(plugin_site):
    result = ragassay_cli("plugins", env=cli_env(plugin_site))
    assert result.returncode == 0, result.stderr
    assert "example/longest" in result.stdout and "ragassay-example-plugin 1.2.3" in result.stdout
    assert "2 plugin(s) failed to load" in result.stdout
    assert "ragassay_dependency_that_is_not_installed" in result.stdout
    assert "RAGASSAY_DISABLE_PLUGINS=broken" in result.stdout
    data = json.loads(ragassay_cli("plugins", "--json", env=cli_env(plugin_site)).stdout)
    failures = {f["plugin"]: f for f in data["failures"]}
    assert set(failures) == {"broken", "broken_register"}
    assert failures["broken"]["distribution"] == "ragassay-broken-plugin"
    assert "not a subclass of ragassay.Retriever" in failures["broken_register"]["error"]


def test_disabling_the_broken_plugins_silences_them(plugin_site):
    env = cli_env(plugin_site, RAGASSAY_DISABLE_PLUGINS="broken,broken_register")
    result = ragassay_cli("plugins", "--json", env=env)
    assert json.loads(result.stdout)["failures"] == []


def test_installed_plugin_components_work_from_a_config(plugin_site, tmp_path):
    path = write_project(
        tmp_path,
        """
        [corpus]
        paths = ["corpus/*"]
        [dataset]
        options = { path = "qa.jsonl" }
        [systems.longest]
        retriever = "example/longest"
        generator = "extractive"
        [systems.echo]
        rag = { name = "example/slow_echo", options = { delay_s = 0.0 } }
        [evaluation]
        metrics = ["example/answer_words", "context_mrr"]
    """,
    )
    result = ragassay_cli("run", str(path), "-q", env=cli_env(plugin_site))
    assert result.returncode == 0, result.stderr  # the broken plugins do not stop a run
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    words = con.execute(
        "select o.answer, m.value from outputs o join metric_values m on m.output_id = o.id "
        "where o.system = 'echo' and m.metric = 'example/answer_words'"
    ).fetchall()
    assert words and all(value == len(answer.split()) for answer, value in words)
    spec = con.execute("select spec_json from run_systems where name = 'longest'").fetchone()[0]
    parts = json.loads(spec)["parts"]
    assert parts["retriever"]["distribution"] == "ragassay-example-plugin"
    assert parts["retriever"]["version"] == "1.2.3"
