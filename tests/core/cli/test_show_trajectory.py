"""``ragassay show RUN SAMPLE --trajectory`` on the hand-built agents run in a real SQLite store, in-process: every
step in order with its kind, name, query, arguments, result or error, retrieved ids with the gold per hop marked,
tokens and latency, nested agents indented, the blamed step marked; readable at 80 columns with markup shown as
text; json, csv and markdown; the timeline under each output of a plain ``show``; one-line errors."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli

from trajectory_runs import MARKUP, PLANT, RUN_ID, write_trajectory_run


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("show-trajectory") / "results.db"
    store, _ = write_trajectory_run(path)
    store.close()
    return str(path)


def show(db: str, *args: str, columns: int = 80):
    return CliRunner().invoke(cli, ["show", RUN_ID, "--db", db, *args], env={"COLUMNS": str(columns)})


def part(text: str, start: str, end: str | None = None) -> str:
    found = text[text.index(start) :]
    return found[: found.index(end)] if end else found


def test_a_trajectory_as_a_timeline_at_80_columns(db):
    result = show(db, "q1", "--trajectory")
    assert result.exit_code == 0, result.output
    text = result.output
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "system single: ok" in text and "no trajectory (a single-shot output, or it failed)" in text
    iterate = part(text, "system iterate")
    assert "trajectory: 7 steps, 400 tokens, 3.000 s\nblame ok (blame)" in iterate
    assert "hop 1 (hop 1 of q1): gold d1: found by s1\n  hop 2 (hop 2 of q1): gold d2: found by s4" in iterate
    assert "1. retrieval search [0.050 s]\n  query: Which country is the client of project Apollo in?" in iterate
    assert "  [1] d1#0 (d1) <- gold hop 1\n2. model_call decide [120 tokens, 0.400 s]" in iterate
    assert "3. agent searcher\n  4. retrieval search [0.050 s]\n    query: client of project Apollo" in iterate
    assert '  5. tool_call lookup [0.200 s]\n    arguments: {"id": "d2"}' in iterate  # nested: indented
    assert f'    result: {{"name": "Acme {PLANT}"}}' in iterate  # markup shown as text
    assert "6. model_call answer [280 tokens, 0.400 s]" in iterate and "  answer: Acme is in France." in iterate
    decompose = part(text, "system decompose", "system iterate")
    assert "  [1] d1#0 (d1) <- gold hop 1\n  [2] x#0 (x)\n3. retrieval search" in decompose


def test_the_blamed_step_is_marked(db):
    text = show(db, "q2", "--trajectory", "--system", "iterate").output
    assert "system decompose" not in text
    assert "blame tool_error at step 3 (s3), hop 2: tool_error at s3" in text
    assert "hop 2 (hop 2 of q2): gold d4: NOT FOUND" in text
    assert f'3. tool_call sql <- BLAMED\n  arguments: {{"query": "{MARKUP}"}}\n  error: timeout after 30 s' in text
    loop = show(db, "q3", "--trajectory", "--system", "iterate").output
    assert "blame loop at step 5 (s5), hop 3" in loop and "5. retrieval search [0.050 s] <- BLAMED" in loop
    judged = show(db, "q4", "--trajectory", "--system", "iterate").output
    assert "blame unsupported_answer at step 3 (s3)" in judged and "3. answer <- BLAMED" in judged
    assert "hop 1" not in judged  # q4 has no hops


def test_the_step_listing_as_json_csv_and_markdown(db):
    data = json.loads(show(db, "q2", "--trajectory", "--format", "json").stdout)
    assert [h["reference_context_ids"] for h in data["hops"]] == [["d3"], ["d4"]]
    single, decompose, iterate = data["systems"]
    assert single["timeline"] is None and decompose["timeline"]["blame"]["blame"] == "missed_hop"
    assert [s["blamed"] for s in decompose["timeline"]["steps"]] == [False, False, True, False, False]
    assert [h["found"] for h in decompose["timeline"]["hops"]] == [True, False]
    assert iterate["timeline"]["steps"][2]["error"] == "timeout after 30 s"
    rows = list(csv.DictReader(io.StringIO(show(db, "q1", "--trajectory", "--format", "csv").stdout)))
    assert [(r["system"], r["step"]) for r in rows] == [("decompose", str(i)) for i in range(1, 6)] + [
        ("iterate", str(i)) for i in range(1, 8)
    ]
    assert rows[1]["retrieved"] == "d1#0 [hop 1], x#0" and rows[8]["depth"] == "1" and rows[8]["kind"] == "retrieval"
    assert rows[9]["detail"] == f'arguments: {{"id": "d2"}} | result: {{"name": "Acme {PLANT}"}}'
    markdown = show(db, "q2", "--trajectory", "--system", "iterate", "--format", "markdown").stdout
    assert "| iterate | 3 | s3 | 0 | tool_call | sql |" in markdown and "| True |" in markdown


def test_a_plain_show_prints_the_timeline_under_each_output(db):
    text = show(db, "q1").output
    assert max(len(line) for line in text.splitlines()) <= 80
    iterate = part(text, "system iterate")
    assert iterate.index("answer: iterate answers q1") < iterate.index("trajectory: 7 steps") < iterate.index("blame:")
    assert "trajectory:" not in part(text, "system single", "system decompose")
    output = json.loads(show(db, "q1", "--format", "json").stdout)["outputs"][1]["output"]
    assert [s["kind"] for s in output["trajectory"]] == ["model_call", "retrieval", "retrieval", "model_call", "answer"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trajectory"], "--trajectory goes with SAMPLE"),
        (["q1", "--system", "iterate"], "--system goes with --conversation CID or SAMPLE --trajectory"),
        (["q1", "--trajectory", "--system", "nope"], "system 'nope' is not in this run"),
        (["zz", "--trajectory"], "has no sample 'zz'"),
    ],
)
def test_bad_input_is_one_line_with_exit_code_2(db, args, message):
    result = show(db, *args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
