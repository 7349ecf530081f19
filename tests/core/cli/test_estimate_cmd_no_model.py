"""``ragassay estimate`` of a project where nothing calls a model (issue 38, item 12): one line that says so,
not a table of zeros; json and csv keep the rows."""

from __future__ import annotations

import csv
import io
import json

import pytest

from conftest import ragassay_cli

pytestmark = pytest.mark.slow


def test_nothing_calls_a_model_is_one_line_and_json_csv_keep_the_rows(project):
    result = ragassay_cli("estimate", str(project))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == [
        "nothing here calls a model: the 2 systems, their metrics and judges have no model component "
        "(0 calls, 0 tokens, $0)"
    ]
    rows = json.loads(ragassay_cli("estimate", str(project), "--format", "json").stdout)
    assert len(rows) > 2 and {row["note"] for row in rows} == {"calls no model"}
    assert {(row["calls_low"], row["calls_high"], row["input_tokens"]) for row in rows} == {(0, 0, 0)}
    table = list(csv.DictReader(io.StringIO(ragassay_cli("estimate", str(project), "--format", "csv").stdout)))
    assert [(r["system"], r["component"]) for r in table] == [(r["system"], r["component"]) for r in rows]
    assert ("bm25", "judge:match") in {(r["system"], r["component"]) for r in table}
