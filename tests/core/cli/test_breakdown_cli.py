"""``ragassay breakdown`` and ``ragassay cost`` on a real run, in-process: json, 80 columns, one-line errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli

from conftest import BASIC_CONFIG, QA, write_project


def invoke(*args: str, columns: int = 80):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": str(columns)})


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("breakdown_cli")
    qa = [dict(q, metadata={"document_type": "[b]pdf" if i else "html"}) for i, q in enumerate(QA)]
    write_project(root, BASIC_CONFIG, qa=qa)
    result = invoke("run", "-q", "--config", str(root))
    assert result.exit_code == 0, result.output
    return root


def test_breakdown_json_and_80_columns(run):
    result = invoke("breakdown", "--config", str(run), "--by", "metadata.document_type", "--metric", "judge:match")
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert "[b]pdf" in result.output and "fewer than 2 scored values" in result.output  # escaped, explained
    data = json.loads(invoke("breakdown", "-c", str(run), "--by", "metadata.document_type", "--json").stdout)
    assert [g["group"] for g in data["groups"]] == ["[b]pdf", "html"]
    assert {r["system"] for r in data["rows"]} == {"keyword", "bm25"}


def test_cost_view_at_80_columns_and_json(run):
    result = invoke("cost", "--config", str(run), "--metric", "judge:match")
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert "quality/$" in result.output and "baseline" in result.output
    data = json.loads(invoke("cost", "-c", str(run), "--format", "json").stdout)
    assert data["baseline"] == "keyword" and [r["system"] for r in data["rows"]] == ["keyword", "bm25"]


@pytest.mark.parametrize(
    "args, message",
    [
        (("breakdown", "--by", "nope"), "no sample field 'nope'"),
        (("breakdown", "--by", "question", "--bins", "3"), "--bins needs a numeric field"),
        (("cost", "--metric", "f1"), "'f1' is not in this run"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, args, message):
    result = invoke(*args, "--config", str(run))
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
