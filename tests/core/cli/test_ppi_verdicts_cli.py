"""``compare --labelled METRIC=RUBRIC``: prediction-powered verdicts on a small stored run with people's labels
(binary, ordinal and pairwise rubrics), from the store and from a labels export; bad --labelled is exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragassay.analysis.ppi import ppi_mean
from ragassay.cli.main import cli
from ragassay.labels import Label, write_jsonl

from written_runs import RUN_ID, write_run

SAMPLES, LABELLED = 60, 30


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})


def truths() -> dict[str, np.ndarray]:
    """Each system's real correctness (b is right more often) and the metric, a judge that errs more on a."""
    rng = np.random.default_rng(7)
    truth = {"a": rng.random(SAMPLES) < 0.5, "b": rng.random(SAMPLES) < 0.8}
    flip = {"a": rng.random(SAMPLES) < 0.25, "b": rng.random(SAMPLES) < 0.05}
    return {s: truth[s].astype(float) for s in truth} | {
        f"m_{s}": np.where(flip[s], 1 - truth[s], truth[s]) for s in truth
    }


def labels(values) -> list[Label]:
    out = []
    for i in range(LABELLED):
        q = f"q{i:03d}"
        for s in ("a", "b"):
            common = dict(run_id=RUN_ID, sample_id=q, rubric_version=1, annotator="ann", labelled_at=float(i))
            out.append(Label(system=s, rubric="correct", value=values[s][i], **common))
            out.append(Label(system=s, rubric="faithful", value=1.0 + 4 * values[s][i], **common))
        shown = ("b", "a") if i % 2 else ("a", "b")  # half shown b first: the value rates the second shown
        preference = 2.0 * (values[shown[1]][i] - values[shown[0]][i])
        out.append(Label(systems=shown, rubric="preference", value=preference, **common))
    return out


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("ppi") / "results.db"
    values = truths()
    systems = {s: [{"metrics": {"m": float(values[f"m_{s}"][i])}} for i in range(SAMPLES)] for s in ("a", "b")}
    store, _ = write_run(path, systems)
    store.add_labels(labels(values))
    store.close()
    return str(path), values


def compare_json(db, *args):
    result = invoke("compare", "--db", db[0], RUN_ID, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def expected(values, y_of) -> tuple:
    """The PPI++ estimate of the paired difference computed here straight from the planted values."""
    f = values["m_b"] - values["m_a"]
    y = [y_of(i) for i in range(LABELLED)]
    return ppi_mean(y, list(f[:LABELLED]), list(f[LABELLED:]), confidence=0.95)


@pytest.mark.parametrize("rubric,scale", [("correct", 1.0), ("faithful", 4.0), ("preference", 2.0)])
def test_each_rubric_kind_decides_on_the_ppi_estimate(db, rubric, scale):
    data = compare_json(db, "--labelled", f"m={rubric}")
    (pair,) = data["ppi"][0]["pairs"]
    values = db[1]
    want = expected(values, lambda i: scale * (values["b"][i] - values["a"][i]))
    f = scale * (values["m_b"] - values["m_a"])
    want = ppi_mean(
        [scale * (values["b"][i] - values["a"][i]) for i in range(LABELLED)], list(f[:LABELLED]), list(f[LABELLED:])
    )
    assert pair["estimate"] == pytest.approx(want.estimate) and pair["lam"] == pytest.approx(want.lam)
    assert (pair["low"], pair["high"]) == pytest.approx((want.low, want.high))  # a family of one: level 0.05
    assert pair["labelled"] == LABELLED and pair["n"] == SAMPLES
    assert pair["judge_mean"] == pytest.approx(f.mean())
    assert pair["verdict"] == ("better" if want.low > 0 else "no detectable difference")
    assert data["ppi"][0]["family"] == ["m"]
    assert all(v["verdict"] == "not in the decision family" for v in data["verdicts"])  # the judge does not decide
    systems = data["ppi"][0]["systems"]
    assert len(systems) == (0 if rubric == "preference" else 2)


def test_a_labels_export_gives_the_same_verdicts_as_the_store(db, tmp_path):
    values = db[1]
    path = tmp_path / "labels.jsonl"
    write_jsonl(labels(values), path)
    from_file = compare_json(db, "--labelled", "m=correct", "--labels", str(path))["ppi"][0]["pairs"]
    stored = compare_json(db, "--labelled", "m=correct")["ppi"][0]["pairs"]
    assert from_file == stored


def test_rich_csv_and_markdown_show_the_estimate_labels_lambda_and_judge_only(db):
    rich = invoke("compare", "--db", db[0], RUN_ID, "--labelled", "m=correct")
    assert rich.exit_code == 0, rich.output
    text = " ".join(rich.output.split())
    assert "prediction-powered verdicts, run written-: against a (baseline)" in text
    assert "30 labelled of 60 samples, lambda" in text and "the judge alone:" in text
    assert all(len(line) <= 80 for line in rich.output.splitlines())
    csv = invoke("compare", "--db", db[0], RUN_ID, "--labelled", "m=correct", "--format", "csv", "--table", "ppi")
    header = csv.stdout.splitlines()[0].split(",")
    assert {"estimate", "low", "high", "lam", "labels_baseline", "labels_system", "judge_low"} <= set(header)
    md = invoke("compare", "--db", db[0], RUN_ID, "--labelled", "m=correct", "--format", "markdown")
    assert "PPI diff [CI]" in md.stdout and "judge only [CI]" in md.stdout and "30/30 (30 both)" in md.stdout


def test_too_few_labels_is_undecided_never_the_judge(db, tmp_path):
    values = db[1]
    few = [x for x in labels(values) if x.rubric == "correct" and x.sample_id == "q000"]
    path = tmp_path / "few.jsonl"
    write_jsonl(few, path)
    (pair,) = compare_json(db, "--labelled", "m=correct", "--labels", str(path))["ppi"][0]["pairs"]
    assert pair["verdict"] == "undecided" and pair["reason"] == "undecided: 1 labels, need 2"
    assert pair["estimate"] is None and pair["low"] is None and pair["judge_mean"] is None


@pytest.mark.parametrize(
    "spec,message",
    [
        ("nope=correct", "has no metric nope. Its metrics and judges: m"),
        (
            "m=unknown",
            "no label of rubric unknown in the labels in the results store. Its rubrics: correct, faithful, preference",
        ),
        ("m", "give METRIC=RUBRIC"),
    ],
)
def test_bad_labelled_is_one_line_and_exit_2(db, spec, message):
    result = invoke("compare", "--db", db[0], RUN_ID, "--labelled", spec)
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output


def test_plan_says_how_many_labels_settle_the_comparison(db):
    result = invoke("plan", "--db", db[0], RUN_ID, "--labelled", "m=correct", "--width", "0.2", "--format", "json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert row["system"] == "b" and row["labelled"] == LABELLED and row["samples"] == SAMPLES
    assert row["half_width"] == 0.2 and 0 < row["correlation"] <= 1
    from ragassay.analysis.ppi import labels_needed

    want = labels_needed(row["sd_labels"], row["sd_judge"], row["correlation"], SAMPLES, 0.2)
    assert row["needed"] == want and want is not None
    assert row["needed_labels_only"] is None or row["needed_labels_only"] >= want  # the judge never costs labels
    rich = invoke("plan", "--db", db[0], RUN_ID, "--labelled", "m=correct")
    assert rich.exit_code == 0 and "labels to settle each comparison" in rich.output
