"""A new user's bad-input sweep over the third wave's commands (issue 38): bad budgets and folders given where a
file belongs. Each is one line on stderr that says what is wrong and what to write, exit code 2, no traceback,
and nothing is run."""

from __future__ import annotations

import pytest

from conftest import ragassay_cli

pytestmark = pytest.mark.slow


def one_line_exit_2(result, *fragments: str) -> str:
    """The error line of ``result``, after checking it is one line, exit 2, and holds every fragment."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.mark.parametrize(
    ("budget", "fragments"),
    [
        ("calls=abc", ("--budget calls=abc: 'abc' is not a whole number of at least 1", "e.g. calls=100")),
        ("tokens=lots", ("'lots' is not a whole number of at least 1", "e.g. tokens=2e6")),
        ("calls=0", ("'0' is not a whole number of at least 1",)),
        ("calls=2.5", ("'2.5' is not a whole number",)),
        ("usd=-1", ("'-1' is not a number of US dollars above 0", "e.g. usd=5")),
        ("usd=nan", ("'nan' is not a number of US dollars above 0",)),
        ("seconds=", ("nothing is not a number of seconds above 0",)),
        ("calls=1,calls=2", ("calls is given twice",)),
        ("cals=3", ("'cals=3' is not KEY=VALUE with KEY one of usd, calls, tokens, seconds",)),
        (",", ("give at least one limit",)),
    ],
)
def test_a_bad_budget_is_one_line_that_says_what_to_write(project, budget, fragments):
    result = ragassay_cli("run", str(project), "--budget", budget)
    line = one_line_exit_2(result, *fragments)
    assert "could not convert" not in line and "Input should be" not in line
    assert not (project.parent / "ragassay-results.db").exists()


def test_runs_given_a_folder_says_to_name_it_with_config_or_db(project):
    folder = project.parent
    one_line_exit_2(ragassay_cli("runs", str(folder)), f"runs takes no argument, got '{folder}'", f"--config {folder}")
    one_line_exit_2(ragassay_cli("runs", str(project)), f"--config {project}")
    database = folder / "results.db"
    one_line_exit_2(ragassay_cli("runs", str(database)), f"--db {database}")
    one_line_exit_2(ragassay_cli("runs", "nothing-here"), "--config FOLDER, or a results database with --db URL")


def folder_cases(folder: str, project: str) -> list[tuple[tuple[str, ...], str]]:
    """(arguments, what the error must say) for each place a third-wave command takes a file."""
    jsonl = "give a JSONL file of labels"
    return [
        (("labels", "import", folder, "-c", project), f"FILE: {folder} is a folder; {jsonl}"),
        (("labels", "import", folder + "/x.jsonl", "--rubric", folder, "-c", project), "--rubric: "),
        (("labels", "export", "RUN", "--out", folder, "-c", project), f"e.g. {folder}/labels.jsonl"),
        (("meta-eval", "RUN", "--labels", folder, "-c", project), "give a labels export (JSONL)"),
        (("align", "match", "--labels", folder, "--examples", "2", "-c", project), f"--labels: {folder} is a folder"),
        (("align", "match", "--examples", "2", "--out", folder, "-c", project), f"e.g. {folder}/aligned.toml"),
        (("label", "RUN", "--rubric", folder, "--annotator", "me", "-c", project), "give a shipped rubric's name"),
        (("unitxt", "score", folder), "give a JSONL file in Unitxt's RAG task layout"),
        (("unitxt", "import", folder, "--into", folder + "-new"), "give a JSONL file in Unitxt's RAG task layout"),
        (("unitxt", "export", "RUN", "-o", folder, "-c", project), f"e.g. {folder}/unitxt.jsonl"),
        (("gate", project, "--baseline", folder), f"--baseline: {folder} is a folder; give a results database file"),
        (("gate", project, "--baseline", folder + "#abc"), "give a results database file"),
        (("gate", project, "--baseline", "RUN", "--summary", folder), f"e.g. {folder}/summary.md"),
        (("gate", project, "--baseline", "RUN", "--html", folder), f"e.g. {folder}/report.html"),
        (("report", "--html", folder, "-c", project), f"--html: {folder} is a folder"),
        (("traces", "testset", "RUN", "--out", folder, "-c", project), f"e.g. {folder}/testset.jsonl"),
        (("traces", "export-evals", "RUN", "--otlp", folder, "-c", project), "an OTLP/HTTP endpoint (http://...)"),
        (("traces", "trend", "RUN", "--db", folder), f"--db: {folder} is a folder; give a results database file"),
        (("serve", "--db", folder), f"e.g. {folder}/ragassay-results.db"),
        (("runs", "--db", folder), "--db: "),
        (("generate", project, "--out", folder), f"e.g. {folder}/generated.jsonl"),
        (("traces", "import", folder, "-c", project), f"{folder}: no trace files"),  # a folder of traces is fine
    ]


def test_a_folder_given_where_a_file_belongs_is_one_line_that_names_the_file(project, tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    for args, fragment in folder_cases(str(folder), str(project)):
        line = one_line_exit_2(ragassay_cli(*args), fragment)
        assert "Traceback" not in line and "internal error" not in line, (args, line)
    assert list(folder.iterdir()) == []


def test_a_dataset_path_that_is_a_folder_says_which_file_belongs_there(project):
    config = project.read_text(encoding="utf-8").replace('path = "qa.jsonl"', 'path = "corpus"')
    project.write_text(config, encoding="utf-8")
    for command in ("run", "estimate"):
        line = one_line_exit_2(ragassay_cli(command, str(project)), "the dataset 'path'", "corpus is a folder")
        assert "give the samples file in it: one .jsonl or .csv file" in line and "not found" not in line
