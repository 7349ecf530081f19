"""``ragassay plan`` on a real run (in-process): power figures in json and at 80 columns, one system, bad input."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from ragassay.analysis.power import mde, samples_needed
from ragassay.cli.main import cli

from conftest import BASIC_CONFIG, write_project

WORDS = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "glacier", "harbor", "island", "jungle", "kelp"]
DOCS = {
    f"{w}.md": f"# {w.title()}\n\nThe {w} station was founded by {w.title()} Corp in {1900 + i}. It sits near the "
    f"{WORDS[(i + 1) % len(WORDS)]} river.\n"
    for i, w in enumerate(WORDS)
}
QA = [
    {
        "question_id": f"q{i:02d}",
        "question": f"Who founded the {w} station?",
        "reference_answers": [f"{w.title()} Corp"],
        "reference_context_ids": [f"corpus/{w}.md"],
        "reference_contexts": [f"The {w} station was founded by {w.title()} Corp"],
    }
    for i, w in enumerate(WORDS)
]
# keyword retrieves one chunk, bm25 three: the retrieval metrics and the answers differ on some questions only
CONFIG = BASIC_CONFIG.replace("options = { top_k = 2 }", "options = { top_k = 1 }").replace(
    'retriever = "bm25"', 'retriever = "bm25"\n    options = { top_k = 3 }'
)
SOLO = CONFIG[: CONFIG.index("[systems.bm25]")] + '[evaluation]\n    judges = ["match"]\n'


def invoke(*args: str, columns: int = 80):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": str(columns)})


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("plan")
    write_project(root, CONFIG, qa=QA, docs=DOCS)
    result = invoke("run", "-q", "--config", str(root))
    assert result.exit_code == 0, result.output
    return root


def test_json_has_the_figures_of_every_metric_and_system(run):
    result = invoke("plan", "--config", str(run), "--effect", "0.03", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["baseline"] == "keyword" and data["design"] == "paired" and data["effect"] == 0.03
    rows = data["rows"]
    assert {r["system"] for r in rows} == {"bm25"} and len(rows) == len({r["metric"] for r in rows})
    assert "judge:match" in {r["metric"] for r in rows} and "token_recall" in {r["metric"] for r in rows}
    varied = [r for r in rows if r["mde"] is not None]
    assert varied, rows
    for row in rows:
        assert row["n"] == len(QA)
        if row["mde"] is None:
            assert row["sd"] == 0 and row["reason"].startswith("no variation observed") and row["needed"] is None
        else:
            assert row["mde"] == pytest.approx(mde(row["sd"], row["n"], 0.05, 0.8)[0])
            assert row["needed"] == samples_needed(row["sd"], 0.03, 0.05, 0.8)[0] > row["n"]
    worst = max(varied, key=lambda r: r["needed"])
    assert data["summary"].startswith(f"Most constrained: {worst['metric']} (bm25 vs keyword)")
    assert f"would need {worst['needed']} samples" in data["summary"]


def test_rich_fits_80_columns_with_a_legend_and_a_closing_sentence(run):
    data = json.loads(invoke("plan", "--config", str(run), "--effect", "0.03", "--json").stdout)
    result = invoke("plan", "--config", str(run), "--effect", "0.03")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "…" not in text
    flat = " ".join(text.split())
    assert "differences smaller than this are unlikely to be detected with the row's n samples" in flat
    assert data["summary"] in flat
    for row in data["rows"]:
        assert f"│ {row['metric']} " in text
        assert (f"{row['mde']:.3f}" if row["mde"] is not None else "no variation") in text
        if row["needed"] is not None:
            assert str(row["needed"]) in text


def test_bonferroni_metric_and_baseline_choices(run):
    plain = json.loads(invoke("plan", "-c", str(run), "--metric", "token_recall", "--json").stdout)
    strict = json.loads(invoke("plan", "-c", str(run), "--metric", "token_recall", "--bonferroni", "--json").stdout)
    assert [r["metric"] for r in plain["rows"]] == ["token_recall"]
    assert strict["comparisons"] == 1 and strict["rows"][0]["mde"] == plain["rows"][0]["mde"]
    two = json.loads(
        invoke(
            "plan", "-c", str(run), "--metric", "token_recall", "--metric", "judge:match", "--bonferroni", "--json"
        ).stdout
    )
    assert two["comparisons"] == 2 and two["alpha_per_comparison"] == pytest.approx(0.025)
    assert two["rows"][0]["mde"] > plain["rows"][0]["mde"]
    flipped = json.loads(invoke("plan", "-c", str(run), "--baseline", "bm25", "--json").stdout)
    assert flipped["baseline"] == "bm25" and {r["system"] for r in flipped["rows"]} == {"keyword"}
    rows = list(csv.DictReader(io.StringIO(invoke("plan", "-c", str(run), "--format", "csv").stdout)))
    assert {r["metric"] for r in rows} == {r["metric"] for r in flipped["rows"]}
    assert "| metric |" in invoke("plan", "-c", str(run), "--format", "markdown").stdout


def test_one_system_gets_the_unpaired_figures(tmp_path):
    write_project(tmp_path, SOLO, qa=QA, docs=DOCS)
    assert invoke("run", "-q", "--config", str(tmp_path)).exit_code == 0
    data = json.loads(invoke("plan", "--config", str(tmp_path), "--effect", "0.1", "--json").stdout)
    assert data["design"] == "unpaired" and data["baseline"] is None
    for row in data["rows"]:
        assert row["system"] == "keyword" and row["n"] == len(QA)
        if row["mde"] is not None:
            assert row["mde"] == pytest.approx(mde(row["sd"], row["n"], 0.05, 0.8, "unpaired")[0])
    text = invoke("plan", "--config", str(tmp_path), "--effect", "0.1").stdout
    assert "(paired) usually needs fewer" in " ".join(text.split())
    assert all(len(line) <= 80 for line in text.splitlines())


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--baseline", "nope"), "--baseline 'nope' is not a system of the run. Its systems: keyword, bm25"),
        (("--metric", "nope"), "has no scored metric 'nope'. Its metrics: token_recall"),
        (("--effect", "0"), "--effect 0.0 is not a positive difference"),
        (("--effect", "-0.1"), "--effect -0.1 is not a positive difference"),
        (("--alpha", "1.5"), "--alpha 1.5 is outside (0, 1)"),
        (("--power", "0"), "--power 0.0 is outside (0, 1)"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, args, words):
    result = invoke("plan", "--config", str(run), *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and words in result.stderr and "Traceback" not in result.stderr
