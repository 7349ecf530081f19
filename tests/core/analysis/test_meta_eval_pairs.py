"""``ragassay meta-eval`` against people on pairwise and custom rubrics: a pair is one item whichever answer was
shown first, the ceiling has the people's own Pearson and Spearman (scipy computes the expected values here), and
a custom rubric's labels are read with its file."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

import ragassay
from ragassay.cli.main import cli

from conftest import BASIC_CONFIG, write_project

N = 12
DOCS = {f"d{i}.md": f"# Item {i}\n\nThe code of item {i} is K{i}X. It was filed in {1990 + i}.\n" for i in range(N)}
QA = [
    {"question_id": f"q{i}", "question": f"What is the code of item {i}?", "reference_answers": [f"K{i}X"]}
    for i in range(N)
]
CONFIG = BASIC_CONFIG.replace('judges = ["match"]', 'metrics = ["token_f1"]\n    judges = ["match"]').replace(
    'retriever = "bm25"', 'retriever = "bm25"\n    generator = { name = "extractive", options = { max_sentences = 2 } }'
)  # bm25's longer answers give another token_f1
COMPLETENESS = """
    name = "completeness"
    version = 1
    kind = "pairwise"
    prompt = "Compared with the first answer, how complete is the second?"
    values = [-1, 0, 1]
    labels = ["less", "as complete", "more"]
    descriptions = ["The second says less.", "Both say as much.", "The second says more."]
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("pairs")
    write_project(root, CONFIG, qa=QA, docs=DOCS)
    return root, ragassay.run(root).run_id


def _preferences(run_id: str, rubric: str = "preference", flip=lambda annotator, i: False) -> list[dict]:
    """alice's and bob's preference of bm25 over keyword per sample; ``flip`` shows a pair as (bm25, keyword),
    the value then rating keyword against bm25 (the same judgement, negated)."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(N):
        base = int(rng.integers(-2, 3)) if rubric == "preference" else int(rng.integers(-1, 2))
        for annotator, noise in (("alice", 0), ("bob", int(rng.integers(-1, 2)))):
            value = float(np.clip(base + noise, -2, 2) if rubric == "preference" else np.clip(base + noise, -1, 1))
            systems = ["keyword", "bm25"]
            if flip(annotator, i):
                systems, value = ["bm25", "keyword"], -value
            rows.append(
                {
                    "run_id": run_id,
                    "sample_id": f"q{i}",
                    "systems": systems,
                    "rubric": rubric,
                    "rubric_version": 1,
                    "annotator": annotator,
                    "value": value + 0.0,
                    "labelled_at": 1.0,
                }
            )
    return rows


def _meta_eval(root, run_id, labels, *args) -> dict:
    path = root / "labels.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in labels), encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["meta-eval", run_id, "--labels", str(path), "--metric", "token_f1", "--resamples", "200", "--json", *args]
    )
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)["rubrics"]
    return report


def _by(rows) -> dict:
    return {(row["judge"], row["statistic"]): row for row in rows}


def test_a_pair_shown_either_way_round_is_one_item_with_one_orientation(project, monkeypatch):
    """Item 18: the same labels with the pairs shown in another order (values negated with them) give the same
    items, the same judge-human statistics and the same ceiling, to the last digit."""
    root, run_id = project
    monkeypatch.chdir(root)
    same = _meta_eval(root, run_id, _preferences(run_id))
    mixed = _meta_eval(root, run_id, _preferences(run_id, flip=lambda annotator, i: (i + (annotator == "bob")) % 2))
    assert (same["items"], same["labels"]) == (mixed["items"], mixed["labels"]) == (N, 2 * N)
    for section in ("agreement", "ceiling"):
        for key, row in _by(same[section]).items():
            assert _by(mixed[section])[key]["value"] == row["value"], (section, key)
            assert _by(mixed[section])[key]["low"] == row["low"], (section, key)


def test_the_pairwise_ceiling_has_the_peoples_pearson_and_spearman(project, monkeypatch):
    """Item 19: beside kappa and alpha, the ceiling of a pairwise rubric has Pearson and Spearman between each pair
    of annotators' preferences (RAGChecker's human-human figures), here with bob's pairs shown reversed."""
    root, run_id = project
    monkeypatch.chdir(root)
    labels = _preferences(run_id, flip=lambda annotator, i: annotator == "bob")
    ceiling = _by(_meta_eval(root, run_id, labels)["ceiling"])
    alice = [row["value"] for row in labels if row["annotator"] == "alice"]
    bob = [-row["value"] for row in labels if row["annotator"] == "bob"]  # bob's pairs were shown (bm25, keyword)
    assert ceiling[("alice ~ bob", "pearson")]["value"] == pytest.approx(stats.pearsonr(alice, bob)[0])
    assert ceiling[("alice ~ bob", "spearman")]["value"] == pytest.approx(stats.spearmanr(alice, bob)[0])
    assert ceiling[("alice ~ bob", "pearson")]["n"] == N and ceiling[("alice ~ bob", "pearson")]["low"] is not None


def test_a_custom_rubrics_labels_are_read_with_its_file(project, monkeypatch):
    """Item 17: labels of a custom rubric imported with its file are meta-evaluated with the same file; without
    it the error says to give it (exit 2, no traceback)."""
    root, run_id = project
    monkeypatch.chdir(root)
    (root / "rubrics").mkdir(exist_ok=True)
    (root / "rubrics" / "completeness.toml").write_text(textwrap.dedent(COMPLETENESS))
    labels = root / "completeness.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in _preferences(run_id, "completeness")), encoding="utf-8")
    imported = CliRunner().invoke(
        cli, ["labels", "import", str(labels), "--config", str(root), "--rubric", "rubrics/completeness.toml"]
    )
    assert imported.exit_code == 0, imported.output

    refused = CliRunner().invoke(cli, ["meta-eval", run_id, "--config", str(root), "--metric", "token_f1"])
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "unknown rubric 'completeness'" in refused.output and "--rubric path/to/completeness.toml" in refused.output

    args = ["--config", str(root), "--metric", "token_f1", "--rubric", "rubrics/completeness.toml", "--json"]
    result = CliRunner().invoke(cli, ["meta-eval", run_id, "--resamples", "100", *args])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.output)["rubrics"]
    assert (report["rubric"], report["kind"], report["scale"]) == ("completeness", "pairwise", [-1.0, 0.0, 1.0])
    assert _by(report["agreement"])[("token_f1", "pearson")]["n"] == 2 * N
