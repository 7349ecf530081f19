"""``ragassay traces trend RUN``: tables readable at 80 columns, json, csv and markdown."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli

from trace_runs import make_run


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trend-cli")
    return folder, make_run(folder)


def invoke(folder, *args):
    return CliRunner().invoke(cli, ["traces", "trend", *args, "-c", str(folder)], env={"COLUMNS": "80"})


def test_rich_tables_fit_80_columns_and_flag_the_drifting_day(project):
    folder, run_id = project
    result = invoke(folder, run_id[:8], "--metric", "exact_match")
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert "exact_match of app by day" in result.output
    lines = [line for line in result.output.splitlines() if "2025-03-06" in line]
    assert len(lines) == 1 and "lower (worse)" in lines[0] and "-0.750" in lines[0]
    assert "reference 2025-03-04" in result.output


def test_json_csv_and_markdown_carry_the_same_windows(project):
    folder, run_id = project
    data = json.loads(invoke(folder, run_id, "--format", "json", "--by", "week").output)
    assert data["trend"]["by"] == "week" and {w["window"] for w in data["windows"]} == {"2025-W10"}
    rows = list(csv.DictReader(io.StringIO(invoke(folder, run_id, "--format", "csv").output)))
    assert len(rows) == 3 * 3 and {r["metric"] for r in rows} == {"exact_match", "token_f1", "judge:match"}
    flagged = [(r["metric"], r["window"], r["flag"]) for r in rows if r["flag"]]
    assert ("exact_match", "2025-03-06", "lower") in flagged
    markdown = invoke(folder, run_id, "--format", "markdown", "--reference", "2025-03-05").output
    assert "**token_f1 of app by day**" in markdown and "| 2025-03-05 |" in markdown


def test_an_unknown_reference_window_is_a_one_line_error(project):
    folder, run_id = project
    result = invoke(folder, run_id, "--reference", "2024-01-01")
    assert result.exit_code == 2 and "2025-03-04, 2025-03-05, 2025-03-06" in result.output
    assert len([line for line in result.output.splitlines() if line.startswith("error:")]) == 1
