"""``ragassay meta-eval`` on a real run: judges and a thresholded metric against the match judge, human labels
on part of the outputs with corrected (PPI) estimates, and its errors (exit 2)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ragassay.analysis.meta_eval import ppi_mean

from conftest import BASIC_CONFIG, ragassay_cli, write_project

pytestmark = pytest.mark.slow

CONFIG = BASIC_CONFIG.replace(
    'judges = ["match"]',
    'metrics = ["token_recall"]\n'
    '    judges = ["match", { name = "match", label = "match_exact", options = { mode = "exact" } }]',
)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("meta-eval")
    path = write_project(root, CONFIG)
    result = ragassay_cli("run", str(path))
    assert result.returncode == 0, result.stderr
    con = sqlite3.connect(root / "ragassay-results.db")
    run_id = con.execute("select id from runs").fetchone()[0]
    judged = {}
    for system, qid, judge, verdict in con.execute(
        "select o.system, o.question_id, j.judge, j.verdict from judgements j join outputs o on o.id = j.output_id"
    ):
        judged.setdefault(judge, {})[(system, qid)] = verdict == "correct"
    recall = {
        (s, q): v
        for s, q, v in con.execute(
            "select o.system, o.question_id, m.value from metric_values m join outputs o on o.id = m.output_id "
            "where m.metric = 'token_recall'"
        )
    }
    return root, run_id, judged, recall


def counts(truth: dict, judged: dict) -> tuple[int, int, int, int]:
    keys = sorted(truth)
    tp = sum(truth[k] and judged[k] for k in keys)
    fp = sum(not truth[k] and judged[k] for k in keys)
    fn = sum(truth[k] and not judged[k] for k in keys)
    return tp, fp, fn, len(keys) - tp - fp - fn


def meta_eval(root, *args):
    return ragassay_cli("meta-eval", *args, "--config", str(root))


def test_judges_and_a_metric_against_the_match_judge(run):
    root, run_id, judged, recall = run
    result = meta_eval(root, run_id[:8], "--metric", "token_recall:0.5", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["run"] == run_id and data["truth"] == "judge:match" and data["corrected"] == []
    rows = {row["judge"]: row for row in data["detectors"]}
    assert list(rows) == ["match_exact", "token_recall>=0.5"]  # the truth is not judged against itself
    truth = judged["match"]
    candidates = {"match_exact": judged["match_exact"], "token_recall>=0.5": {k: v >= 0.5 for k, v in recall.items()}}
    for name, verdicts in candidates.items():
        tp, fp, fn, tn = counts(truth, verdicts)
        row = rows[name]
        assert (row["tp"], row["fp"], row["fn"], row["tn"], row["n"]) == (tp, fp, fn, tn, 6)
        assert row["precision"] == (tp / (tp + fp) if tp + fp else None)
        assert row["recall"] == (tp / (tp + fn) if tp + fn else None)
        assert row["accuracy"] == pytest.approx((tp + tn) / 6)
        if row["accuracy"] is not None and row["accuracy_low"] is not None:
            assert row["accuracy_low"] <= row["accuracy"] <= row["accuracy_high"]
    again = meta_eval(root, run_id[:8], "--metric", "token_recall:0.5", "--json")
    assert again.stdout == result.stdout  # seeded bootstrap: same numbers
    text = meta_eval(root, run_id[:8], "--format", "markdown")
    assert text.returncode == 0 and "| match_exact |" in text.stdout and "GRAMMAR Table 1" in text.stdout


def test_human_labels_on_part_of_the_outputs_give_corrected_estimates(run, tmp_path):
    root, run_id, judged, _ = run
    match = judged["match"]
    labelled = sorted(match)[::2]  # every other output: 3 of 6
    labels = {k: (not match[k]) if i == 0 else match[k] for i, k in enumerate(labelled)}  # the judge wrong once
    path = tmp_path / "labels.csv"
    path.write_text(
        "question_id,system,label\n"
        + "".join(f"{q},{s},{'correct' if v else 'incorrect'}\n" for (s, q), v in labels.items())
        + "q9,keyword,correct\n",  # matches no output
        encoding="utf-8",
    )
    result = meta_eval(root, run_id, "--labels", str(path), "--judge", "match", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["truth"] == "labels:labels.csv"
    (detector,) = data["detectors"]
    assert detector["n"] == 3 and detector["accuracy"] == pytest.approx(2 / 3)
    for row in data["corrected"]:
        system = row["system"]
        mine = sorted(k for k in match if k[0] == system)
        expected = ppi_mean(
            [float(match[k]) for k in mine if k not in labels],
            [float(match[k]) for k in mine if k in labels],
            [float(labels[k]) for k in mine if k in labels],
        )
        assert (row["labelled"], row["unlabelled"]) == (expected.labelled, expected.unlabelled)
        assert row["ppi_mean"] == expected.estimate and row["labels_mean"] == expected.classical
    rich = meta_eval(root, run_id, "--labels", str(path))
    assert "prediction-powered" in rich.stdout and "1 label rows match no output" in rich.stdout


def test_bad_input_is_one_line_and_exit_2(run, tmp_path):
    root, run_id, _, _ = run
    nothing = tmp_path / "none.jsonl"
    nothing.write_text('{"question_id": "zz", "system": "keyword", "label": "correct"}\n', encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "q1", "system": "keyword", "label": "maybe"}\n', encoding="utf-8")
    cases = [
        (("--labels", str(nothing)), "matches an output of the run"),
        (("--labels", str(bad)), "bad.jsonl:1: label 'maybe'"),
        (("--metric", "nope:0.5"), "has no metric 'nope'"),
        (("--metric", "token_recall"), "is not NAME:THRESHOLD"),
        (("--truth", "judge:gpt"), "has no judge 'gpt'"),
        (("--judge", "gpt"), "has no judge 'gpt'"),
    ]
    for args, message in cases:
        result = meta_eval(root, run_id, *args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
    both = meta_eval(root, run_id, "--truth", "judge:match", "--labels", str(bad))
    assert both.returncode == 2 and "not both" in both.stderr
