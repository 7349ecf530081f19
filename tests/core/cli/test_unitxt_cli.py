"""``ragassay unitxt score|import|export`` and the Unitxt JSONL layout: a Unitxt user's dataset and predictions go
in, ragassay's scores come out, with one clear message for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli
from ragassay.errors import DatasetError
from ragassay.unitxt import read_unitxt, record_to_sample, sample_to_record

RECORDS = [
    {
        "question": "Who leads the hello team?",
        "question_id": "1",
        "metadata_field": "people",
        "answer": "hello there general dude",
        "contexts": ["B C", "C", "hello team lead"],
        "contexts_ids": ["A", "B", "C"],
        "reference_answers": ["hello there general kenobi", "hello there!"],
        "reference_context_ids": ["A", "C"],
        "is_answerable_label": True,
    },
    {
        "question": "q2",
        "question_id": "2",
        "answer": "B",
        "contexts": ["D", "X"],
        "contexts_id": ["A", "B"],
        "reference_answers": ["B C", "C"],
        "reference_context_ids": ["B"],
    },
    {
        "question": "q3",
        "question_id": 3,
        "answer": "x",
        "contexts": ["x"],
        "context_ids": [7],
        "reference_answers": [],
        "reference_context_ids": [],
    },
]


def write(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_layout_reads_every_spelling_of_the_context_ids(tmp_path):
    records = read_unitxt(write(tmp_path / "d.jsonl", RECORDS))
    assert [r.contexts_ids for r in records] == [("A", "B", "C"), ("A", "B"), ("7",)]
    assert records[2].question_id == "3"
    sample = record_to_sample(records[0])
    assert sample.metadata == {"metadata_field": "people"} and sample.is_answerable is True
    back = sample_to_record(sample, records[0].answer, list(records[0].contexts), list(records[0].contexts_ids))
    assert {k: back[k] for k in RECORDS[0]} == RECORDS[0]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"question_id": "1"}, "line 1: 'question' must be a non-empty string"),
        ({"question": "q", "contexts": "text"}, "line 1: 'contexts' must be a list"),
        ({"question": "q", "contexts": ["a"], "contexts_ids": ["1", "2"]}, "1 contexts but 2 contexts_ids"),
        ({"question": "q", "answer": 3}, "'answer' must be a string"),
        ({"question": "q", "is_answerable_label": "yes"}, "'is_answerable_label' must be true or false"),
        ({"question": "q", "reference_answers": [None]}, "'reference_answers' must hold strings"),
    ],
)
def test_layout_errors_name_line_and_field(tmp_path, row, message):
    with pytest.raises(DatasetError, match=message.replace("(", r"\(").replace("'", "'")):
        read_unitxt(write(tmp_path / "d.jsonl", [row]))


def test_duplicate_question_ids_are_refused(tmp_path):
    rows = [{"question": "a", "question_id": "x"}, {"question": "b", "question_id": "x"}]
    with pytest.raises(DatasetError, match="line 2: question_id 'x' already on line 1"):
        read_unitxt(write(tmp_path / "d.jsonl", rows))


def test_score_prints_means_with_intervals_and_writes_instances(tmp_path):
    data = write(tmp_path / "d.jsonl", RECORDS)
    out = tmp_path / "scores.jsonl"
    result = invoke("unitxt", "score", str(data), "-o", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {row["metric"]: row for row in json.loads(result.output)}
    assert rows["context_mrr"]["mean"] == pytest.approx(0.5)
    assert rows["context_map"]["mean"] == pytest.approx(4 / 9)
    assert (rows["context_map"]["ci_low"], rows["context_map"]["ci_high"]) == pytest.approx((0.0, 0.7222222222222222))
    assert rows["token_recall"]["scored"] == 3  # unitxt mode: the record without references scores 0
    instances = [json.loads(line) for line in out.read_text().splitlines()]
    assert instances[0]["score"]["instance"]["token_recall"] == 1.0
    assert instances[1]["score"]["instance"]["token_recall"] == 0.5
    assert instances[2]["contexts_ids"] == ["7"]


def test_score_in_ragassay_mode_reports_unscored_with_reasons(tmp_path):
    data = write(tmp_path / "d.jsonl", RECORDS)
    out = tmp_path / "scores.jsonl"
    result = invoke("unitxt", "score", str(data), "--compat", "ragassay", "-o", str(out), "--format", "json")
    rows = {row["metric"]: row for row in json.loads(result.output)}
    assert rows["token_recall"]["scored"] == 2 and rows["token_recall"]["mean"] == pytest.approx(0.75)
    third = json.loads(out.read_text().splitlines()[2])["score"]
    assert third["instance"]["context_mrr"] is None
    assert third["unscored"]["context_mrr"] == "sample has no reference_context_ids"


def test_score_rich_table_fits_80_columns(tmp_path):
    data = write(tmp_path / "d.jsonl", RECORDS)
    result = CliRunner().invoke(cli, ["unitxt", "score", str(data)], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert "context_relevance_token_precision" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metrics", "bleu"], "unknown metric 'bleu'"),
        (["--resamples", "-1"], "Invalid value"),
    ],
)
def test_score_bad_options(tmp_path, args, message):
    data = write(tmp_path / "d.jsonl", RECORDS)
    result = CliRunner().invoke(cli, ["unitxt", "score", str(data), *args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_score_needs_predictions(tmp_path):
    data = write(tmp_path / "d.jsonl", [{"question": "q", "question_id": "1"}])
    result = CliRunner().invoke(cli, ["unitxt", "score", str(data)])
    assert result.exit_code == 2
    assert "line 1 (question_id '1') has no 'answer'" in result.output


def test_import_run_export_round_trip(tmp_path):
    data = write(tmp_path / "d.jsonl", RECORDS)
    project = tmp_path / "proj"
    assert invoke("unitxt", "import", str(data), "--into", str(project)).exit_code == 0
    result = invoke("run", "--config", str(project))
    assert result.exit_code == 0, result.output
    out = tmp_path / "export.jsonl"
    result = invoke("unitxt", "export", "--config", str(project), "-o", str(out))
    assert result.exit_code == 0, result.output
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["question_id"] for r in exported] == ["1", "2", "3"]
    assert {r["system"] for r in exported} == {"predictions"}
    bulk = json.loads(invoke("unitxt", "score", str(data), "--no-ci", "--format", "json").output)
    for row in bulk:  # the run (per-sample plugins, compat unitxt) and the bulk scorer agree
        values = [r["score"]["instance"][row["metric"]] for r in exported]
        assert sum(values) / len(values) == pytest.approx(row["mean"]), row["metric"]
    again = CliRunner().invoke(cli, ["unitxt", "import", str(data), "--into", str(project)])
    assert again.exit_code == 2 and "already exists" in again.output


def test_export_unknown_system(tmp_path):
    data = write(tmp_path / "d.jsonl", RECORDS)
    project = tmp_path / "proj"
    invoke("unitxt", "import", str(data), "--into", str(project))
    invoke("run", "--config", str(project))
    result = CliRunner().invoke(cli, ["unitxt", "export", "--config", str(project), "-o", "x", "--system", "nope"])
    assert result.exit_code == 2
    assert "has no system nope; its systems: predictions" in result.output
