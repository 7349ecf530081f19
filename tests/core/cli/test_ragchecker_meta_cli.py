"""RAGChecker's meta-evaluation data through the command line, as a user brings in stored scores and labels:
``ragassay run`` of one ``precomputed`` system per RAG system (RAGChecker's values read by ``trace_value``),
``ragassay labels import`` of both annotators' preferences, and what the store then holds, checked against
tests/data/ragchecker_meta (itself re-derivable from RAGChecker's files: its README). ``meta-eval`` of the
pooled run (model2 against model1) gives RAGChecker's own Table 2 correlations, and ``compare --labelled`` decides
model2 against model1 on a quarter of the people's preferences, corrected by RAGChecker's F1 on every instance."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner

from ragassay.analysis.ppi import ppi_mean
from ragassay.cli.main import cli

from ragchecker_meta import ANNOTATORS, RUBRICS, instances, labels, systems, write_labels, write_project

RUBRIC_FILES = ("correctness_preference.toml", "completeness_preference.toml")


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _run(config) -> str:
    """``ragassay run CONFIG -q``; the id of the run it made (the newest, from ``ragassay runs``)."""
    _invoke("run", str(config), "-q")
    return json.loads(_invoke("runs", "--config", str(config), "--format", "json"))[0]["run"]


def _import(root, run_id: str, *, positions: bool = False) -> str:
    path = root / ("positions-labels.jsonl" if positions else "labels.jsonl")
    write_labels(path, run_id, positions=positions)
    rubrics = [arg for name in RUBRIC_FILES for arg in ("--rubric", str(root / name))]
    return _invoke("labels", "import", str(path), "--config", str(root / "ragassay.toml"), *rubrics)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("ragchecker_meta")
    config = write_project(root)
    run_id = _run(config)
    imported = _import(root, run_id)
    return root, run_id, imported


@pytest.fixture(scope="module")
def items():
    return instances()


def test_the_run_holds_every_response_and_ragchecker_value(project, items):
    root, run_id, _ = project
    runs = json.loads(_invoke("runs", "--config", str(root), "--format", "json"))
    row = next(r for r in runs if r["run"] == run_id)
    names = systems(items)
    assert (len(names), row["samples"], row["outputs"]) == (8, 280, 8 * 280)
    assert row["failed"] == 8 * 280 - 2 * 280  # a RAG system answered only the instances it took part in
    for item in (items[0], items[137], items[279]):
        shown = json.loads(_invoke("show", run_id, str(item["instance_id"]), "--config", str(root), "--format", "json"))
        answered = {o["system"]: o for o in shown["outputs"] if o["status"] == "ok"}
        assert set(answered) == {item["model1"]["name"], item["model2"]["name"]}
        for side in ("model1", "model2"):
            output = answered[item[side]["name"]]
            assert output["answer"] == f"sha256:{item[side]['response_sha256']}"
            values = {m["metric"]: m["value"] for m in output["metrics"]}
            expected = item[side]["ragchecker"]
            assert values == {f"ragchecker_{key}": expected[key] for key in ("precision", "recall", "f1")}
        failed = [o for o in shown["outputs"] if o["status"] != "ok"]
        assert len(failed) == 6 and all("no precomputed output" in o["error"] for o in failed)


def test_labels_import_stores_both_annotators_preferences(project, items, tmp_path):
    root, run_id, imported = project
    assert imported.startswith("imported 1680 label(s)")
    again = _import(root, run_id)
    assert again.startswith("imported 0 label(s)") and "1680 were already stored" in again
    out = tmp_path / "export.jsonl"
    _invoke("labels", "export", run_id, "--config", str(root), "--out", str(out))
    stored = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert Counter(s["rubric"] for s in stored) == {rubric: 560 for rubric, _ in RUBRICS.values()}
    assert Counter(s["annotator"] for s in stored) == {name: 840 for name in ANNOTATORS}
    found = {(s["sample_id"], tuple(s["systems"]), s["rubric"], s["annotator"]): s["value"] for s in stored}
    for item in (items[0], items[41], items[279]):
        pair = (item["model1"]["name"], item["model2"]["name"])
        for annotator, given in zip(ANNOTATORS, item["labels"]):
            for aspect, (rubric, _) in RUBRICS.items():
                assert found[(str(item["instance_id"]), pair, rubric, annotator)] == given[aspect]


def test_pooled_meta_eval_gives_ragcheckers_table_2(project, items):
    """model2 against model1 over all 280 instances, each label one observation: the Pearson correlation of
    RAGChecker's difference with the people's preference, as numpy computes it from the source values and as
    the paper prints it (Table 2, RAGChecker: correctness 49.66, completeness 60.67, overall 61.93)."""
    root, _, _ = project
    run_id = _run(root / "positions.toml")
    assert _import(root, run_id, positions=True).startswith("imported 1680 label(s)")
    printed = {"correctness": 49.66, "completeness": 60.67, "overall": 61.93}
    metrics = {"correctness": "ragchecker_precision", "completeness": "ragchecker_recall", "overall": "ragchecker_f1"}
    for aspect, (rubric, _) in RUBRICS.items():
        key = metrics[aspect].removeprefix("ragchecker_")
        rubric_arg = rubric if rubric == "preference" else str(root / f"{rubric}.toml")
        report = json.loads(
            _invoke("meta-eval", run_id, "--config", str(root), "--metric", metrics[aspect], "--rubric", rubric_arg,
                    "--resamples", "0", "--json")
        )  # fmt: skip
        (block,) = report["rubrics"]
        pearson = next(a["value"] for a in block["agreement"] if a["statistic"] == "pearson")
        difference = [item["model2"]["ragchecker"][key] - item["model1"]["ragchecker"][key] for item in items]
        people = [label[aspect] for item in items for label in item["labels"]]
        assert pearson == pytest.approx(np.corrcoef(np.repeat(difference, 2), people)[0, 1], abs=1e-12)
        assert round(100 * pearson, 2) == printed[aspect]


def test_prediction_powered_pairwise_verdict_through_the_cli(tmp_path, items):
    """``compare --labelled ragchecker_f1=preference --labels FILE`` with both annotators' overall preferences of
    70 of the 280 instances (seeded): the pair's estimate and interval are PPI++ of the people's mean preference
    of model2 over model1 (the two annotators averaged), with RAGChecker's F1 difference on the preference scale
    (x2: a 0..1 metric's difference onto -2..2) as the prediction on every instance, computed here from the
    data file; the judge-only interval is RAGChecker's difference alone."""
    write_project(tmp_path)
    run_id = _run(tmp_path / "positions.toml")
    chosen = {str(i) for i in np.random.default_rng(7).choice([it["instance_id"] for it in items], 70, replace=False)}
    rows = [r for r in labels(run_id, positions=True) if r["rubric"] == "preference" and r["sample_id"] in chosen]
    path = tmp_path / "quarter.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = json.loads(
        _invoke("compare", run_id, "--config", str(tmp_path / "positions.toml"), "--labelled",
                "ragchecker_f1=preference", "--labels", str(path), "--format", "json")
    )  # fmt: skip
    (block,) = out["ppi"]
    (pair,) = block["pairs"]
    truth, judged, rest = [], [], []
    for item in items:
        f = 2 * (item["model2"]["ragchecker"]["f1"] - item["model1"]["ragchecker"]["f1"])
        if str(item["instance_id"]) in chosen:
            truth.append(sum(label["overall"] for label in item["labels"]) / len(item["labels"]))
            judged.append(f)
        else:
            rest.append(f)
    expected = ppi_mean(truth, judged, rest)
    assert (pair["system"], pair["baseline"], pair["labelled"], pair["n"]) == ("model2", "model1", 70, 280)
    assert (pair["estimate"], pair["low"], pair["high"]) == pytest.approx(
        (expected.estimate, expected.low, expected.high)
    )
    assert pair["lam"] == pytest.approx(expected.lam)
    assert (pair["judge_low"], pair["judge_high"]) == pytest.approx((expected.judge_only.low, expected.judge_only.high))
    decided = "worse" if expected.high < 0 else "better" if expected.low > 0 else "no detectable difference"
    assert pair["verdict"] == decided


def test_a_verdict_on_a_handful_of_labels_is_flagged(tmp_path, items):
    """Five labelled instances decide, but the output warns that an interval from fewer than 10 is rough (on this
    data, intervals from 2 labels covered in about 6 draws of 10: docs/statistics.md); 10 instances do not warn."""
    write_project(tmp_path)
    run_id = _run(tmp_path / "positions.toml")
    rows = labels(run_id, positions=True)
    for count, warned in ((5, True), (10, False)):
        chosen = {str(item["instance_id"]) for item in items[:count]}
        path = tmp_path / f"first{count}.jsonl"
        kept = [r for r in rows if r["rubric"] == "preference" and r["sample_id"] in chosen]
        path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
        out = _invoke(
            "compare", run_id, "--config", str(tmp_path / "positions.toml"), "--labelled",
            "ragchecker_f1=preference", "--labels", str(path), "--format", "markdown", "--table", "ppi",
        )  # fmt: skip
        note = f"model2 vs model1 on ragchecker_f1 rests on {count} labelled samples"
        assert (note in out) is warned, out
