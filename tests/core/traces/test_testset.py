"""Test sets from traffic: one sample per normalised question, answers as unverified candidates, read back by
the files dataset source."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ragassay import ComponentContext
from ragassay.cli.main import cli
from ragassay.plugins.files import FilesSource

from trace_runs import DAYS, PER_DAY, make_run, trace_id


def test_repeated_questions_fold_and_answers_become_unverified_candidates(tmp_path):
    run_id = make_run(tmp_path, duplicates=True)
    out = tmp_path / "regression.jsonl"
    result = CliRunner().invoke(cli, ["traces", "testset", run_id, "--out", str(out), "-c", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"{PER_DAY} question(s) from {DAYS * PER_DAY} trace sample(s)" in result.output
    assert f"({PER_DAY * (DAYS - 1)} repeated question(s) folded)" in result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == PER_DAY and len({r["question_id"] for r in records}) == PER_DAY
    first, second = records[0], records[1]
    assert first["question"] == "What is the capital of country 0?"  # the first phrasing seen
    assert first["reference_answers"] == ["paris"]  # answered right on every day
    assert second["reference_answers"] == ["paris", "lyon"]  # right on days 0 and 1, wrong on day 2
    assert second["metadata"]["references"].startswith("unverified")
    assert second["metadata"]["trace_ids"] == [trace_id(1), trace_id(PER_DAY + 1), trace_id(2 * PER_DAY + 1)]
    samples = list(
        FilesSource(FilesSource.Options(path=str(out)), context=ComponentContext(project_dir=tmp_path)).samples()
    )
    assert [s.question_id for s in samples] == [r["question_id"] for r in records]
    assert samples[1].reference_answers == ["paris", "lyon"] and samples[1].metadata["trace_ids"][0] == trace_id(1)


def test_the_same_question_gets_the_same_id_from_any_run(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ids = []
    for folder, duplicates in ((tmp_path / "a", True), (tmp_path / "b", False)):
        run_id = make_run(folder, duplicates=duplicates)
        out = folder / "qa.out.jsonl"
        CliRunner().invoke(cli, ["traces", "testset", run_id, "--out", str(out), "-c", str(folder)])
        ids.append(
            {json.loads(line)["question"]: json.loads(line)["question_id"] for line in out.read_text().splitlines()}
        )
    shared = set(ids[0]) & set(ids[1])
    assert len(shared) == PER_DAY and all(ids[0][q] == ids[1][q] for q in shared)
    result = CliRunner().invoke(
        cli, ["traces", "testset", run_id, "--out", "o.jsonl", "--system", "nope", "-c", str(folder)]
    )
    assert result.exit_code != 0 and "not a system of the run; its systems: app" in result.output
