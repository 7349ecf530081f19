"""``ragassay label`` refuses what it cannot serve before it starts: a non-loopback host without a token, an
unknown run or system, a pairwise rubric without exactly two systems, an unknown rubric (each exit 2, one line)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli

from labels_helpers import RUN_ID, SYSTEMS, open_label_store


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("label-cli") / "results.db"
    open_label_store(path, samples=4).close()
    return str(path)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--host", "0.0.0.0"], "--token"),
        (["--rubric", "tone"], "neither a shipped rubric"),
        (["--run", "nope"], "run 'nope' not found"),
        (["--systems", "ghost"], "the run has no system 'ghost'"),
        (["--rubric", "preference", "--systems", SYSTEMS[0]], "compares two systems; the run has 1"),
        (["--annotator", " "], "give a name"),
    ],
)
def test_label_refuses_before_starting(db, args, message):
    options = {"--rubric": "correct", "--annotator": "ann", "--run": RUN_ID}
    rest = []
    for key, value in zip(args[::2], args[1::2]):
        if key in options:
            options[key] = value
        else:
            rest += [key, value]
    run = options.pop("--run")
    argv = ["label", run, "--db", db, *[x for kv in options.items() for x in kv], *rest]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert message in result.output
