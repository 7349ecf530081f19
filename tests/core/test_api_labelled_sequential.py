"""``run --sequential`` (:func:`ragassay.api` refuses it) on a config that decides on people's labels (``[evaluation] labelled``) is refused before any
unit runs, with one message that points to the anytime-valid decision on the labels (``compare --labelled
--sequential``); so is a config that sets both."""

from __future__ import annotations

from click.testing import CliRunner

from ragassay.cli.main import cli

from conftest import write_project

CONFIG = """
    [project]
    name = "labelled-sequential"

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [systems.keyword]
    retriever = "keyword"
    generator = "extractive"

    [systems.bm25]
    extends = "keyword"
    retriever = "bm25"

    [evaluation]
    judges = ["match"]
    labelled = {{ "judge:match" = "correct" }}
    {extra}
"""


def test_run_sequential_with_labelled_points_to_compare_labelled_sequential(tmp_path):
    config = write_project(tmp_path, CONFIG.format(extra=""))
    result = CliRunner().invoke(cli, ["run", str(config), "--sequential", "--new", "-q"], env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "labelled and sequential cannot go together in a run" in text
    assert "ragassay compare RUN --labelled METRIC=RUBRIC --sequential" in text and "Traceback" not in text
    assert "units done" not in text


def test_a_config_with_both_is_refused_with_the_same_pointer(tmp_path):
    config = write_project(tmp_path, CONFIG.format(extra="sequential = { batch = 1 }"))
    result = CliRunner().invoke(cli, ["run", str(config), "--new", "-q"], env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert "compare RUN --labelled METRIC=RUBRIC --sequential" in " ".join(result.output.split())
