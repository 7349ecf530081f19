"""``ragassay robustness RUN``: the profile as tables readable at 80 columns, json, csv and markdown."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli

from robustness_project import make_run


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("robustness-cli"))


def invoke(folder, *args):
    result = CliRunner().invoke(cli, ["robustness", *args, "-c", str(folder)], env={"COLUMNS": "80"})
    return result


def test_rich_tables_fit_80_columns_and_name_every_perturbation(project):
    folder, run_id = project
    result = invoke(folder, run_id[:8])
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    for word in ("distractors", "drop_gold", "counterfactual", "inject", "worse", "what breaks each system most"):
        assert word in result.output
    assert "do robust groups stay robust?" in result.output


def test_json_holds_the_profile_and_every_table(project):
    folder, run_id = project
    result = invoke(folder, run_id, "--format", "json")
    data = json.loads(result.output)
    effects = {row["system"]: row for row in data["effects"]}
    assert effects["noisy"]["effect"] == pytest.approx(-0.625) and effects["noisy"]["verdict"] == "worse"
    assert effects["noisy"]["ci_low"] <= -0.625 <= effects["noisy"]["ci_high"] < 0
    assert data["profile"]["metrics"] == ["judge:match"]
    assert {row["metric"] for row in data["rates"]} == {"refusal", "counterfactual_following", "injection_success"}


def test_csv_writes_one_table_and_markdown_one_row_per_effect(project):
    folder, run_id = project
    rows = list(csv.DictReader(io.StringIO(invoke(folder, run_id, "--format", "csv").output)))
    assert [r["system"] for r in rows] == ["noisy", "no_gold", "cf", "injected"]
    ranking = invoke(folder, run_id, "--format", "csv", "--table", "ranking").output
    assert ranking.splitlines()[0] == "system,rank,perturbation,effect,verdict"
    markdown = invoke(folder, run_id, "--format", "markdown", "--table", "effects").output
    assert markdown.count("| noisy |") == 1


def test_an_unknown_metric_is_an_error_that_lists_the_runs_columns(project):
    folder, run_id = project
    result = invoke(folder, run_id, "--metric", "nope")
    assert result.exit_code != 0 and "judge:match" in result.output
