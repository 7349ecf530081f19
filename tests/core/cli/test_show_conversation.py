"""``ragassay show RUN --conversation CID`` and ``--conversations`` on a hand-built conversational run in a real
SQLite store, in-process: the turns in order with each system's query, contexts (references marked), answer,
claims and first failure, readable at 80 columns with markup shown as text; json, csv and markdown; one-line
errors with exit code 2."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli

from conversation_runs import MARKUP, PLANT, RUN_ID, write_bare_turns, write_conversation_run
from written_runs import write_run


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("show-conversation") / "results.db"
    store, _ = write_conversation_run(path)
    store.close()
    return str(path)


def show(db: str, *args: str, columns: int = 80):
    return CliRunner().invoke(cli, ["show", RUN_ID, "--db", db, *args], env={"COLUMNS": str(columns)})


def test_a_conversation_turn_by_turn_at_80_columns(db):
    result = show(db, "--conversation", "c1")
    assert result.exit_code == 0, result.output
    text = result.output
    assert max(len(line) for line in text.splitlines()) <= 80
    assert text.index("turn 1 (c1::1, answerable)") < text.index("turn 2 (c1::2") < text.index("turn 3 (c1::3")
    assert "last: turn 2 (retrieval): retrieval at turn 2" in text and "rewrite: no failing turn" in text
    turn2 = text[text.index("turn 2 (c1::2") : text.index("turn 3 (c1::3")]
    assert "last: ok, blame retrieval FIRST FAILURE" in turn2
    assert "  [1] doc-a#0: Text of A.\n  [2] doc-b#3 (reference): Text of B." in turn2  # doc-b is turn 2's reference
    assert f"query: rewritten: {MARKUP} is it? {PLANT}" in turn2  # rich markup shown as text
    assert (
        "history (turn 1): It opened in 1999" in turn2 and "context (context [2]): It has three floors" in turn2
    )  # 0-based index 1, listed as [2]
    assert f"none: It sells {PLANT} tickets" in turn2
    assert "query: (the question itself)" in turn2  # "last" sent the question
    assert "user: hello\n  agent: hi!" in text  # the opening, before the first evaluated turn


def test_the_conversation_as_json_csv_and_markdown(db):
    data = json.loads(show(db, "--conversation", "c1", "--format", "json").stdout)
    assert [t["question_id"] for t in data["turns"]] == ["c1::1", "c1::2", "c1::3"]
    assert data["first_failures"]["last"]["turn"] == 2 and data["first_failures"]["rewrite"] is None
    last2 = data["turns"][1]["systems"][0]
    assert [c["support"] for c in last2["claims"]["claims"]] == ["history", "context", "none"]
    assert [c["reference"] for c in last2["contexts"]] == [False, True] and last2["first_failure"] is True
    rows = list(csv.DictReader(io.StringIO(show(db, "--conversation", "c1", "--format", "csv").stdout)))
    assert [(r["turn"], r["system"]) for r in rows] == [(t, s) for t in "123" for s in ("last", "rewrite")]
    assert [r["first_failure"] for r in rows].count("True") == 1 and rows[2]["claims_none"] == "1"
    assert rows[3]["query"] == f"rewritten: {MARKUP} is it? {PLANT}"
    markdown = show(db, "--conversation", "c3", "--system", "rewrite", "--format", "markdown").stdout
    assert "| 3 | rewrite | ok |" in markdown and "| last |" not in markdown


def test_the_conversations_listing_with_a_threshold(db):
    data = json.loads(show(db, "--conversations", "--metric", "recall", "--threshold", "0.75", "--json").stdout)
    assert [(r["conversation"], r["system"], r["first_failure"]) for r in data] == [
        ("c1", "last", 2),
        ("c1", "rewrite", 3),
        ("c2", "last", 2),
        ("c2", "rewrite", None),
        ("c3", "last", 1),
        ("c3", "rewrite", None),
    ]
    text = show(db, "--conversations").output
    assert max(len(line) for line in text.splitlines()) <= 80 and "context_loss" in text


def test_a_turn_sample_shows_the_conversation_before_it(db):
    text = show(db, "c1::2").output
    assert "turn 2 of conversation c1; before it:" in text
    assert f"ragassay show {RUN_ID[:12]} --conversation c1" in " ".join(text.split())
    assert "user: Which museum is in Lyon?\n  agent: reply 1" in text
    assert text.index("agent: reply 1") < text.index("question (c1::2)")


@pytest.mark.parametrize(
    "args, message",
    [
        (("--conversation", "zz"), "has no conversation 'zz'; it has: c1, c2, c3"),
        (("--conversation", "c1", "--system", "nope"), "system 'nope' is not in this run"),
        (("--conversations", "--threshold", "0.5"), "needs its metric"),
        (("--conversations", "--metric", "recall"), "not a turn_blame metric"),
        ((), "give one of SAMPLE, --conversation CID or --conversations"),
        (("c1::1", "--conversation", "c1"), "give one of SAMPLE"),
        (("--conversations", "--system", "last"), "--system goes with --conversation CID"),
        (("c1::1", "--metric", "recall"), "--metric and --threshold go with --conversation"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(db, args, message):
    result = show(db, *args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_a_run_without_conversations(tmp_path):
    store, run_id = write_run(tmp_path / "plain.db", {"a": [{"metrics": {"m": 1.0}}]})
    store.close()
    result = CliRunner().invoke(cli, ["show", run_id, "--db", str(tmp_path / "plain.db"), "--conversations"])
    assert result.exit_code == 2 and "has no conversation" in result.output


def test_a_failed_turn_and_no_blame_metric(tmp_path):
    store, run_id = write_bare_turns(tmp_path / "bare.db")
    store.close()
    args = ["show", run_id, "--db", str(tmp_path / "bare.db"), "--conversation", "b"]
    text = CliRunner().invoke(cli, args, env={"COLUMNS": "80"}).output
    assert "no turn_blame metric in this run: give --metric and --threshold" in text
    assert "s: failed\n  error: planted failure" in text
    found = CliRunner().invoke(cli, [*args, "--metric", "recall", "--threshold", "0.5"]).output
    assert "s: turn 1 (below the threshold): recall = 0" in found
