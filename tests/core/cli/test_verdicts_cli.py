"""The verdict block of ``compare`` and ``run``: --baseline, --alpha, --seed, --explain, --compact, formats."""

from __future__ import annotations

import json

import pytest

from conftest import BASIC_CONFIG, cli_env, ragassay_cli, write_project

BOX = set("│┃━─┏┓┗┛┡┩└┘╇┳┻")


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A project with two systems (keyword, bm25) after one run, and the run's output."""
    root = tmp_path_factory.mktemp("verdicts")
    config = write_project(root, BASIC_CONFIG)
    result = ragassay_cli("run", str(config), cwd=root, env=cli_env(COLUMNS="80"))
    assert result.returncode == 0, result.stderr
    return root, result.stderr.split("run ")[1].split(":")[0], result.stdout


def compare(root, run_id, *args):
    result = ragassay_cli("compare", run_id, "-c", str(root), *args, env=cli_env(COLUMNS="80"))
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_run_ends_with_the_verdict_block_and_quiet_has_none(scored, tmp_path):
    root, run_id, stdout = scored
    assert f"verdicts, run {run_id[:8]}: against keyword (baseline)" in stdout
    assert stdout.index("comparison: mean") < stdout.index("verdicts, run") and "on token_recall" in stdout
    quiet = ragassay_cli("run", str(write_project(tmp_path, BASIC_CONFIG)), "-q", cwd=tmp_path)
    assert quiet.returncode == 0 and "verdicts" not in quiet.stdout + quiet.stderr


def test_baseline_names_who_is_tested_against_whom(scored):
    root, run_id, _ = scored
    text = compare(root, run_id, "--baseline", "bm25")
    assert "against bm25 (baseline)" in text and "keyword and bm25 (baseline)" in " ".join(text.split())
    tables = json.loads(compare(root, run_id, "--baseline", "bm25", "--format", "json"))
    pairs = tables["verdicts"]
    assert {(p["baseline"], p["system"]) for p in pairs} == {("bm25", "keyword")}
    assert {p["metric"] for p in pairs} >= {"token_recall", "judge:match"}
    for pair in pairs:  # 3 samples: no difference could reach the level, and the verdicts say so
        assert pair["verdict"] in ("too few differing samples", "not in the decision family")
        assert pair["n"] == 3 and 0 < pair["p_value"] <= 1 and pair["p_holm"] is None


def test_unknown_baseline_and_bad_alpha_are_one_line_errors(scored):
    root, run_id, _ = scored
    for args, message in (
        (("--baseline", "nope"), "--baseline 'nope' is not a system of the run. Its systems: keyword, bm25"),
        (("--alpha", "1.5"), "--alpha 1.5 is outside (0, 1)"),
    ):
        result = ragassay_cli("compare", run_id, "-c", str(root), *args)
        assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_same_seed_same_numbers_and_csv_carries_the_interval(scored):
    root, run_id, _ = scored
    first = compare(root, run_id, "--seed", "7", "--format", "json")
    assert first == compare(root, run_id, "--seed", "7", "--format", "json")
    rows = json.loads(first)["comparison"]
    for row in rows:
        assert {"token_recall", "token_recall ci_low", "token_recall ci_high", "token_recall n"} <= set(row)
        assert "token_recall unscored" in row
    csv_text = compare(root, run_id, "--format", "csv")
    assert csv_text.splitlines()[0].startswith("system,run,token_recall,token_recall ci_low,token_recall ci_high")
    import pandas

    frame = pandas.read_csv(__import__("io").StringIO(csv_text))  # one table: a frame as it is
    assert list(frame["system"]) == ["keyword", "bm25"] and "token_recall ci_low" in frame.columns
    verdicts = pandas.read_csv(
        __import__("io").StringIO(compare(root, run_id, "--format", "csv", "--table", "verdicts"))
    )
    assert set(verdicts["system"]) == {"bm25"} and "ci_low" in verdicts.columns


def test_explain_compact_and_markdown(scored):
    root, run_id, _ = scored
    plain = compare(root, run_id)
    assert "legend:" not in plain and BOX & set(plain)
    explained = " ".join(compare(root, run_id, "--explain").split())
    for anchor in ("#confidence-intervals", "#one-procedure", "#the-decision-family", "#tarones-reduction"):
        assert f"docs/statistics.md{anchor}" in explained
    assert "Holm p:" in explained and "MDE:" in explained and "too few differing samples:" in explained
    compact = compare(root, run_id, "--compact")
    assert not BOX & set(compact) and "\x1b[" not in compact and "verdicts, run" in compact
    assert "keyword" in compact and "[" in compact
    markdown = compare(root, run_id, "--format", "markdown")
    assert "**verdicts: each system against the baseline" in markdown and "| keyword | bm25 |" in markdown


def test_run_baseline_option(scored, tmp_path):
    # a re-run of the same config reuses the stored run and prints the comparison again, against bm25
    root, run_id, _ = scored
    result = ragassay_cli("run", str(root), "--baseline", "bm25", cwd=root, env=cli_env(COLUMNS="80"))
    assert result.returncode == 0, result.stderr
    assert f"verdicts, run {run_id[:8]}: against bm25 (baseline)" in result.stdout
    bad = ragassay_cli("run", str(root), "--baseline", "nope", cwd=root)
    assert bad.returncode == 2 and "nope" in bad.stderr and "Traceback" not in bad.stderr
