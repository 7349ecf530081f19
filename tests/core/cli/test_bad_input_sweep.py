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
