"""End to end: ``ragassay run`` on the shipped BEIR sample with bm25, scored against trec_eval's measures
computed directly from the qrels file and the stored rankings."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragassay
from ragassay.cli.main import cli
from ragassay.plugins.ir_metrics import evaluate

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "beir_sample"
CONFIG = """
[project]
name = "beir_sample"
results = "results.db"

[dataset]
source = "beir"
options = { path = "beir_sample" }

[systems.bm25]
rag = "retrieval"
chunker = { name = "document", options = { title = "join" } }
retriever = "bm25"
options = { top_k = 10 }

[evaluation]
metrics = [{ name = "ndcg_at_k", options = { k = 10 } }, { name = "ndcg_at_k", label = "ndcg_at_3", options = { k = 3 } }]
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("beir_run")
    shutil.copytree(SAMPLE, root / "beir_sample")
    (root / "ragassay.toml").write_text(CONFIG, encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", "-q", "--config", str(root)])
    assert result.exit_code == 0, result.output
    return ragassay.open_run(config=root).data(payloads=True)


def qrels_from_file() -> dict[str, dict[str, int]]:
    """The judgements, read here with the csv module (not by the source under test)."""
    with (SAMPLE / "qrels" / "test.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    qrels: dict[str, dict[str, int]] = {}
    for row in rows:
        qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return qrels


def stored_ranking(data, qid: str) -> list[tuple[str, float]]:
    output = json.loads(data.outputs["bm25", qid].payload)
    return list(zip(output["context_ids"], output["trace"]["scores"]))


def test_every_judged_query_is_a_sample_and_the_skip_is_stored(run):
    assert run.question_ids == sorted(qrels_from_file()) == [f"q{i}" for i in range(1, 9)]
    assert any("1 of 9 queries have no judgement" in warning for warning in run.info.warnings)


@pytest.mark.parametrize("label, k", [("ndcg_at_k", 10), ("ndcg_at_3", 3)])
def test_ndcg_equals_trec_eval_measures_from_the_qrels_and_stored_rankings(run, label, k):
    qrels = qrels_from_file()
    trec_run = {qid: stored_ranking(run, qid) for qid in run.question_ids}
    per_query, _ = evaluate(qrels, trec_run, cutoffs=(k,))
    stored = dict(zip(run.question_ids, run.values("bm25", label)))
    assert stored == pytest.approx({qid: per_query[qid][f"ndcg_cut_{k}"] for qid in run.question_ids}, abs=1e-12)
    assert len(set(stored.values())) > 1  # the sample separates queries: not every ranking is perfect


def test_one_query_by_hand(run):
    """nDCG@10 of q1 from its stored ranking: gain = grade, discount log2(rank + 1), ideal = grades 2, 1."""
    grades = qrels_from_file()["q1"]
    ordered = sorted(stored_ranking(run, "q1"), key=lambda pair: (pair[1], pair[0]), reverse=True)  # trec_eval's
    ranking = [docid for docid, _ in ordered]
    dcg = sum(grades.get(docid, 0) / math.log2(rank + 1) for rank, docid in enumerate(ranking[:10], start=1))
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert run.values("bm25", "ndcg_at_k")[0] == pytest.approx(dcg / ideal, abs=1e-12)
