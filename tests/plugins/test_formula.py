"""The formula metric: a derived metric over other metrics of the same unit, parsed, never eval'd."""

from __future__ import annotations

import json
import sqlite3

import pytest
from pydantic import ValidationError

import ragassay
from ragassay import Unscored
from ragassay.plugins.formula import Formula, FormulaOptions

from conftest import BASIC_CONFIG, write_project


def formula(expression, inputs, **options):
    return Formula(FormulaOptions(expression=expression, inputs=inputs, **options))


def test_eq_5_1_shape_and_unscored_inputs():
    full = formula(
        "(relevancy + correctness + faithfulness) / 3 + context",
        {"relevancy": "a", "correctness": "b", "faithfulness": "c", "context": "d"},
    )
    assert full.inputs() == ["a", "b", "c", "d"]
    assert full.derive({"a": 0.9, "b": 0.6, "c": 0.3, "d": 0.5}) == pytest.approx(1.1)
    assert full.derive({"a": 0.9, "b": None, "c": 0.3, "d": 0.5}) == Unscored(
        reason="input metric(s) unscored for this output: b"
    )
    assert formula("x / y", {"x": "a", "y": "b"}).derive({"a": 1.0, "b": 0.0}).reason.startswith("division by zero")
    assert formula("max(x, 0.5) - abs(-y)", {"x": "a", "y": "b"}).derive({"a": 0.2, "b": 0.1}) == pytest.approx(0.4)


@pytest.mark.parametrize(
    "expression, message",
    [
        ("__import__('os').system('true')", "is not allowed"),
        ("x ** 2", "is not allowed"),
        ("x +", "not valid arithmetic"),
        ("x + z", "expression uses z, which 'inputs' does not map"),
    ],
)
def test_anything_but_arithmetic_is_refused_when_configured(expression, message):
    with pytest.raises(ValidationError, match=message):
        FormulaOptions(expression=expression, inputs={"x": "a"})


def test_formula_in_a_run_with_its_declared_direction_and_range(tmp_path):
    config = BASIC_CONFIG.replace(
        "[evaluation]",
        """[evaluation]
metrics = ["exact_match", "token_recall", { name = "formula", label = "mean2", options = { expression = "(em + tr) / 2", inputs = { em = "exact_match", tr = "token_recall" }, value_range = [0, 1] } }, { name = "formula", label = "loss", options = { expression = "1 - tr", inputs = { tr = "token_recall" }, direction = "lower" } }]""",
    )
    path = write_project(tmp_path, config)
    summary = ragassay.run(path)
    assert summary.failed == 0 and summary.metric_errors == 0
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    rows = con.execute(
        "select e.value, t.value, f.value, l.value from metric_values e join metric_values t on "
        "t.output_id = e.output_id join metric_values f on f.output_id = e.output_id join "
        "metric_values l on l.output_id = e.output_id where e.metric = 'exact_match' and "
        "t.metric = 'token_recall' and f.metric = 'mean2' and l.metric = 'loss'"
    ).fetchall()
    assert len(rows) == 6 and all(
        f == pytest.approx((e + t) / 2) and lo == pytest.approx(1 - t) for e, t, f, lo in rows
    )
    spec = json.loads(con.execute("select spec_json from runs").fetchone()[0])
    assert spec["metrics"]["loss"]["traits"]["direction"] == "lower"
    assert spec["metrics"]["mean2"]["traits"]["value_range"] == [0.0, 1.0]
