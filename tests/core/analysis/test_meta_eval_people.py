"""``ragassay meta-eval`` against people's labels (labels export format) on a real run: binary, ordinal and
pairwise rubrics, each number equal to scikit-learn / scipy / krippendorff computed here from the stored
judgements and the labels; and the errors."""

from __future__ import annotations

import json
import sqlite3
import statistics

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats
from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score, precision_score, recall_score

import ragassay
from ragassay.cli.main import cli

from conftest import BASIC_CONFIG, write_project

N = 14
DOCS = {f"d{i}.md": f"# Item {i}\n\nThe code of item {i} is K{i}X. It was filed in {1990 + i}.\n" for i in range(N)}
QA = [
    {
        "question_id": f"q{i}",
        "question": f"What is the code of item {i}?",
        "reference_answers": [f"K{i}X" if i % 3 else f"Z{i}"],  # every third reference is not in the corpus
    }
    for i in range(N)
]
CONFIG = BASIC_CONFIG.replace('judges = ["match"]', 'metrics = ["token_f1"]\n    judges = ["match"]').replace(
    'retriever = "bm25"', 'retriever = "bm25"\n    generator = { name = "extractive", options = { max_sentences = 2 } }'
)  # bm25's longer answers give another token_f1


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("people")
    write_project(root, CONFIG, qa=QA, docs=DOCS)
    run_id = ragassay.run(root).run_id
    con = sqlite3.connect(root / "ragassay-results.db")
    judged = {
        (s, q): v
        for s, q, v in con.execute(
            "select o.system, o.question_id, j.score from judgements j join outputs o on o.id = j.output_id"
        )
    }
    recall = {
        (s, q): v
        for s, q, v in con.execute(
            "select o.system, o.question_id, m.value from metric_values m join outputs o on o.id = m.output_id "
            "where m.metric = 'token_f1'"
        )
    }
    return root, run_id, judged, recall


def _label(run_id, rubric, annotator, value, sample, system=None, systems=None, at=1.0):
    return {
        "run_id": run_id,
        "sample_id": sample,
        "system": system,
        "systems": systems,
        "rubric": rubric,
        "rubric_version": 1,
        "annotator": annotator,
        "value": value,
        "labelled_at": at,
    }


def _labels(run_id, judged):
    rng = np.random.default_rng(0)
    rows = []
    outputs = sorted(judged)
    for k, (system, sample) in enumerate(outputs[:20]):  # binary: 20 of 28 outputs labelled, PPI on the rest
        for annotator in ("alice", "bob") + (("carol",) if k % 2 else ()):
            value = judged[(system, sample)] if rng.random() < 0.8 else 1 - judged[(system, sample)]
            rows.append(_label(run_id, "correct", annotator, float(value), sample, system))
    for system, sample in outputs:
        for annotator in ("alice", "bob"):
            base = 4 if judged[(system, sample)] else 2
            value = float(np.clip(base + rng.integers(-1, 2), 1, 5))
            rows.append(_label(run_id, "faithful", annotator, value, sample, system))
    for i in range(N):
        for annotator in ("alice", "bob"):
            value = float(rng.integers(-2, 3))
            rows.append(_label(run_id, "preference", annotator, value, f"q{i}", systems=["keyword", "bm25"]))
    rows.append(_label(run_id, "faithful", "bob", 9.0, "q0", "keyword", at=0.5))  # undone: a later label wins
    return rows


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _meta_eval(root, *args):
    result = CliRunner().invoke(cli, ["meta-eval", *args, "--config", str(root)], env={"COLUMNS": "80"})
    return result


def _rows(data, rubric, section="agreement"):
    (report,) = [r for r in data["rubrics"] if r["rubric"] == rubric]
    return {(row["judge"], row["statistic"]): row for row in report[section]}, report


def test_meta_eval_against_people_equals_reference_implementations(project, tmp_path):
    root, run_id, judged, recall = project
    rows = _labels(run_id, judged)
    path = _write(tmp_path / "labels.jsonl", rows)
    result = _meta_eval(root, run_id[:8], "--labels", str(path), "--metric", "token_f1", "--resamples", "200", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["truth"] == "labels:labels.jsonl"

    # binary: majority truth (ties left out), the judge's verdicts
    binary, report = _rows(data, "correct")
    by_item = {}
    for r in rows:
        if r["rubric"] == "correct":
            by_item.setdefault((r["system"], r["sample_id"]), []).append(r["value"])
    truth = {k: statistics.fmean(v) > 0.5 for k, v in by_item.items() if statistics.fmean(v) != 0.5}
    keys = sorted(truth)
    human, judge = [truth[k] for k in keys], [judged[k] == 1.0 for k in keys]
    assert binary[("match", "precision")]["value"] == pytest.approx(precision_score(human, judge))
    assert binary[("match", "recall")]["value"] == pytest.approx(recall_score(human, judge))
    assert binary[("match", "balanced_accuracy")]["value"] == pytest.approx(balanced_accuracy_score(human, judge))
    assert binary[("match", "kappa")]["value"] == pytest.approx(cohen_kappa_score(human, judge))
    assert binary[("match", "kappa")]["n"] == len(keys)
    ceiling, _ = _rows(data, "correct", "ceiling")
    both = [v for v in _annotators(rows, "correct").values() if "alice" in v and "bob" in v]
    expected = cohen_kappa_score([v["alice"] for v in both], [v["bob"] for v in both])
    assert ceiling[("alice ~ bob", "cohen_kappa")]["value"] == pytest.approx(expected)
    assert ceiling[("all annotators", "krippendorff_alpha_nominal")]["value"] == pytest.approx(
        _alpha(rows, "correct", "nominal")
    )
    ppi = [c for c in report["corrected"] if c["judge"] == "match"]
    assert {c["system"] for c in ppi} == {"keyword", "bm25"}
    assert sum(c["labelled"] for c in ppi) == len(by_item) and sum(c["unlabelled"] for c in ppi) == 28 - len(by_item)

    # ordinal: each label one observation; the match judge's 0/1 put on 1..5
    ordinal, _ = _rows(data, "faithful")
    faithful = [r for r in rows if r["rubric"] == "faithful" and r["value"] != 9.0]
    labels = [r["value"] for r in faithful]
    scores = [judged[(r["system"], r["sample_id"])] for r in faithful]
    expected = cohen_kappa_score(labels, [1 + 4 * s for s in scores], labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert ordinal[("match", "weighted_kappa_quadratic")]["value"] == pytest.approx(expected)
    assert ordinal[("match", "spearman")]["value"] == pytest.approx(stats.spearmanr(scores, labels)[0])
    ceiling, _ = _rows(data, "faithful", "ceiling")
    assert ceiling[("all annotators", "krippendorff_alpha_ordinal")]["value"] == pytest.approx(
        _alpha(rows, "faithful", "ordinal")
    )

    # pairwise: token_f1(bm25) - token_f1(keyword) against the preference
    pairwise, _ = _rows(data, "preference")
    prefs = [r for r in rows if r["rubric"] == "preference"]
    diffs = [recall[("bm25", r["sample_id"])] - recall[("keyword", r["sample_id"])] for r in prefs]
    values = [r["value"] for r in prefs]
    assert np.std(diffs) > 0  # the fixture makes the metric differ between the systems
    assert pairwise[("token_f1", "pearson")]["value"] == pytest.approx(stats.pearsonr(diffs, values)[0])
    assert pairwise[("token_f1", "spearman")]["value"] == pytest.approx(stats.spearmanr(diffs, values)[0])
    item_diff = [recall[("bm25", f"q{i}")] - recall[("keyword", f"q{i}")] for i in range(N)]
    item_mean = [statistics.fmean(r["value"] for r in prefs if r["sample_id"] == f"q{i}") for i in range(N)]
    expected = stats.spearmanr(item_diff, item_mean)[0]
    assert pairwise[("token_f1", "spearman_item_mean")]["value"] == pytest.approx(expected)
    assert pairwise[("token_f1", "pearson")]["n"] == len(prefs)

    text = _meta_eval(root, run_id[:8], "--labels", str(path), "--resamples", "100", "--format", "markdown")
    assert text.exit_code == 0 and "people among themselves" in text.output
    table = _meta_eval(
        root, run_id[:8], "--labels", str(path), "--resamples", "50", "--table", "ceiling", "--format", "csv"
    )
    assert table.exit_code == 0 and table.output.startswith("rubric,judge,statistic,value")


def _annotators(rows, rubric):
    items = {}
    for r in rows:
        if r["rubric"] == rubric:
            key = (r["system"], r["sample_id"], tuple(r["systems"] or ()))
            items.setdefault(key, {})[r["annotator"]] = r  # later rows win, as the latest label does
    return {k: {a: r["value"] for a, r in v.items()} for k, v in items.items()}


def _alpha(rows, rubric, level):
    items = _annotators(sorted(rows, key=lambda r: r["labelled_at"]), rubric)
    names = sorted({a for v in items.values() for a in v})
    data = [[v.get(a, np.nan) for v in items.values()] for a in names]
    scale = {"correct": [0, 1], "faithful": [1, 2, 3, 4, 5]}[rubric]
    return krippendorff.alpha(data, level_of_measurement=level, value_domain=scale)


def test_errors_name_the_problem(project, tmp_path):
    root, run_id, judged, _ = project
    other = _write(tmp_path / "other.jsonl", [_label("someotherrun", "correct", "a", 1.0, "q1", "keyword")])
    result = _meta_eval(root, run_id[:8], "--labels", str(other))
    assert result.exit_code != 0 and f"no label in labels:other.jsonl is for run {run_id[:12]}" in result.output
    bad = _write(tmp_path / "bad.jsonl", [_label(run_id, "correct", "a", 3.0, "q1", "keyword")])
    result = _meta_eval(root, run_id[:8], "--labels", str(bad))
    assert result.exit_code != 0 and "values [3.0] outside its scale [0.0, 1.0]" in result.output
    unknown = _write(tmp_path / "unknown.jsonl", [_label(run_id, "tone", "a", 1.0, "q1", "keyword")])
    result = _meta_eval(root, run_id[:8], "--labels", str(unknown))
    assert result.exit_code != 0 and "unknown rubric 'tone'" in result.output
    missing = _write(tmp_path / "missing.jsonl", [{"run_id": run_id, "rubric": "correct", "annotator": "a"}])
    result = _meta_eval(root, run_id[:8], "--labels", str(missing))
    assert result.exit_code != 0 and "missing.jsonl:1: a label needs sample_id, value" in result.output
