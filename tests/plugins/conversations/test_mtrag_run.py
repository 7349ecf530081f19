"""End to end: ``ragassay run`` over MTRAG's sliced generation tasks and retrieval tasks with an offline system
(naive RAG and the conversational RAG with the history as query, BM25, extractive reader) stores one output per
evaluated turn and system, ``question_id`` = ``conversation::turn``,
and the MTRAG metrics' stored values are MTRAG's scorers applied to the stored answers."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragassay
from ragassay.cli.main import cli
from ragassay.plugins.conversations.mtrag_metrics import extractiveness_rouge, recall, rouge_l

DATA = Path(__file__).resolve().parents[2] / "data" / "mtrag"
CID = "dd6b6ffd177f2b311abe676261279d2f"
SYSTEM = """
[systems.bm25]
rag = "naive"
chunker = "document"
retriever = "bm25"
generator = "extractive"
options = { top_k = 3 }

[systems.history]
extends = "bm25"
rag = "conversational_naive"
options = { top_k = 3, query = "history" }
"""
TASKS = (
    """
[project]
name = "mtrag_tasks"
results = "results.db"

[corpus]
paths = ["corpus/clapnq.jsonl"]

[dataset]
source = "mtrag_tasks"
options = { path = "mtrag/sample_data/responses-10.jsonl" }
"""
    + SYSTEM
    + """
[evaluation]
metrics = ["mtrag_recall", "mtrag_rouge_l", "mtrag_k_precision", "mtrag_extractiveness_rouge_l"]
"""
)
RETRIEVAL = (
    """
[project]
name = "mtrag_retrieval"
results = "results.db"

[dataset]
source = "mtrag_retrieval"
options = { path = "mtrag/retrieval_tasks/clapnq", corpus = "mtrag/corpora/passage_level/clapnq.jsonl.zip", queries = "rewrite" }
"""
    + SYSTEM
    + """
[evaluation]
metrics = [{ name = "recall_at_k", options = { k = 3 } }, "mtrag_k_precision"]
"""
)


def run_project(root: Path, config: str):
    shutil.copytree(DATA, root / "mtrag")
    (root / "corpus").mkdir()
    with zipfile.ZipFile(DATA / "corpora/passage_level/clapnq.jsonl.zip") as archive:
        (root / "corpus/clapnq.jsonl").write_bytes(archive.read("clapnq.jsonl"))
    (root / "ragassay.toml").write_text(config, encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", "-q", "--config", str(root)])
    assert result.exit_code == 0, result.output
    return ragassay.open_run(config=root).data(payloads=True)


@pytest.fixture(scope="module")
def tasks_run(tmp_path_factory):
    return run_project(tmp_path_factory.mktemp("mtrag_tasks"), TASKS)


@pytest.fixture(scope="module")
def retrieval_run(tmp_path_factory):
    return run_project(tmp_path_factory.mktemp("mtrag_retrieval"), RETRIEVAL)


def test_one_output_per_generation_task_turn(tasks_run):
    records = [json.loads(line) for line in (DATA / "sample_data/responses-10.jsonl").read_text().splitlines()]
    expected = sorted(f"{r['conversation_id']}::{r['turn']}" for r in records)
    assert sorted(tasks_run.question_ids) == expected and len(expected) == 10
    for system in ("bm25", "history"):
        outputs = [tasks_run.payload(system, qid) for qid in expected]
        assert all(output.answer and 1 <= len(output.context_ids) == len(output.contexts) <= 3 for output in outputs)
    queries = [tasks_run.payload("history", qid).query for qid in expected]
    first_turns = [r for r in records if r["turn"] == 1]
    assert sum(q is not None for q in queries) == len(expected) - len(first_turns)  # the history was the query


def test_stored_mtrag_values_are_mtrags_scorers_on_the_stored_answers(tasks_run):
    records = {
        r["task_id"]: r for r in map(json.loads, (DATA / "sample_data/responses-10.jsonl").read_text().splitlines())
    }
    values = {
        name: dict(zip(tasks_run.question_ids, tasks_run.values("bm25", name)))
        for name in ("mtrag_recall", "mtrag_rouge_l", "mtrag_extractiveness_rouge_l")
    }
    for qid in tasks_run.question_ids:
        output = tasks_run.payload("bm25", qid)
        target = records[qid]["targets"][0]["text"]
        assert values["mtrag_recall"][qid] == pytest.approx(recall(output.answer, target), abs=1e-12)
        assert values["mtrag_rouge_l"][qid] == pytest.approx(rouge_l(output.answer, target), abs=1e-12)
        best = max(extractiveness_rouge(output.answer, context) for context in output.contexts)
        assert values["mtrag_extractiveness_rouge_l"][qid] == pytest.approx(best, abs=1e-12)
    assert len({round(v, 6) for v in values["mtrag_recall"].values()}) > 2  # the turns differ


def test_one_output_per_retrieval_turn_scored_against_the_qrels(retrieval_run):
    rows = [
        json.loads(line) for line in (DATA / "retrieval_tasks/clapnq/clapnq_rewrite.jsonl").read_text().splitlines()
    ]
    expected = sorted(row["_id"].replace("<::>", "::") for row in rows)
    assert sorted(retrieval_run.question_ids) == expected and all(q.startswith(CID + "::") for q in expected)
    recalls = dict(zip(retrieval_run.question_ids, retrieval_run.values("bm25", "recall_at_k")))
    assert all(value is not None for value in recalls.values()) and max(recalls.values()) > 0
