"""Human label files for ``ragassay meta-eval``: JSONL and CSV, label spellings, and one clear error each."""

from __future__ import annotations

import pytest

from ragassay import ConfigError
from ragassay.analysis.meta_eval_load import parse_metric_spec, read_labels, truth_from_labels


def test_jsonl_and_csv_with_every_label_spelling(tmp_path):
    jsonl = tmp_path / "l.jsonl"
    jsonl.write_text(
        '{"question_id": "q1", "system": "a", "label": "correct"}\n\n'
        '{"question_id": "q2", "system": "a", "label": "No"}\n'
        '{"question_id": "q1", "system": "b", "correct": true}\n',
        encoding="utf-8",
    )
    assert read_labels(jsonl) == {("a", "q1"): True, ("a", "q2"): False, ("b", "q1"): True}
    csv = tmp_path / "l.csv"
    csv.write_text("question_id,system,correct\nq1,a,1\nq2,a,0\nq2,a,false\n", encoding="utf-8")
    assert read_labels(csv) == {("a", "q1"): True, ("a", "q2"): False}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"question_id": "q1", "system": "a", "label": "maybe"}\n', "l.jsonl:1: label 'maybe'"),
        ('{"question_id": "q1", "label": "correct"}\n', "l.jsonl:1: missing system"),
        ("not json\n", "l.jsonl:1: invalid JSON at column 1: expected a value"),
        ("[1, 2]\n", "must be an object"),
        (
            '{"question_id": "q1", "system": "a", "label": "yes"}\n{"question_id": "q1", "system": "a", "label": "0"}\n',
            "l.jsonl:2: a / q1 is labelled both correct and incorrect",
        ),
        ("\n", "has no rows"),
    ],
)
def test_bad_label_files(tmp_path, text, message):
    path = tmp_path / "l.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        read_labels(path)


def test_labels_join_the_run_by_system_and_question(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(
        '{"question_id": "q1", "system": "a", "label": "correct"}\n'
        '{"question_id": "q9", "system": "a", "label": "correct"}\n',
        encoding="utf-8",
    )
    truth = truth_from_labels(path, {("a", "q1"), ("b", "q1")})
    assert truth.values == {("a", "q1"): True} and truth.unmatched == 1 and truth.from_labels
    with pytest.raises(ConfigError, match="no label of"):
        truth_from_labels(path, {("b", "q1")})
    with pytest.raises(ConfigError, match="cannot read labels file"):
        read_labels(tmp_path / "missing.jsonl")


def test_metric_specs():
    assert parse_metric_spec("k_precision:0.5") == ("k_precision", 0.5)
    assert parse_metric_spec("plugin/metric:4") == ("plugin/metric", 4.0)
    for bad in ("k_precision", ":0.5", "k_precision:high"):
        with pytest.raises(ConfigError, match="is not NAME:THRESHOLD"):
            parse_metric_spec(bad)
