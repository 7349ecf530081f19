"""End to end: keyword vs BM25 vs dense vs hybrid on the same samples, through a real config and the real runner."""

from __future__ import annotations

import json

import pytest

import ragassay
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.results import read_run

from conftest import ragassay_cli, write_project
from dense_support import minilm_folder

CONFIG = """
    [project]
    name = "retrieval-comparison"
    concurrency = 2

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = { path = "qa.jsonl" }

    [defaults]
    chunker = { name = "recursive", options = { size = 200, overlap = 20 } }

    [systems.keyword]
    retriever = "keyword"
    generator = "extractive"
    options = { top_k = 2 }

    [systems.bm25]
    extends = "keyword"
    retriever = "bm25"

    [systems.dense]
    extends = "keyword"
    retriever = { name = "dense", options = { embedder = { name = "local", options = { batch_size = 8 } } } }

    [systems.hybrid]
    extends = "keyword"

    [systems.hybrid.retriever]
    name = "hybrid"

    [[systems.hybrid.retriever.options.retrievers]]
    name = "bm25"

    [[systems.hybrid.retriever.options.retrievers]]
    name = "dense"
    options.embedder = { name = "local", options = { batch_size = 8 } }

    [evaluation]
    metrics = ["context_mrr", "ir_map", "ndcg_at_k", { name = "hit_at_k", options = { k = 1 } }]
"""


def metric_table(config_path, run_id):
    store = Project(load_config(config_path)).open_store()
    try:
        rows = read_run(store, run_id).records(kind="metric", repeat=0)
    finally:
        store.close()
    return {(r.system, r.question_id, r.label): r.value for r in rows}


@pytest.mark.slow
def test_four_retrievers_compared_on_the_same_samples_and_dense_cache_shared(tmp_path):
    minilm_folder()
    config = write_project(tmp_path, CONFIG)
    summary = ragassay.run(config)
    assert summary.failed == 0 and summary.completed == 12 and summary.metric_errors == 0
    values = metric_table(config, summary.run_id)
    for system in ("keyword", "bm25", "dense", "hybrid"):
        for qid in ("q1", "q2", "q3"):
            assert (system, qid, "ir_map") in values and (system, qid, "ndcg_at_k") in values
    # MiniLM ranks the right document first for every question, and so does fusing it with BM25
    assert all(values[("dense", qid, "hit_at_k")] == 1.0 for qid in ("q1", "q2", "q3"))
    assert all(values[("hybrid", qid, "context_mrr")] == 1.0 for qid in ("q1", "q2", "q3"))
    entries = list((tmp_path / ".ragassay-cache" / "dense").iterdir())
    assert len(entries) == 1  # the dense and hybrid systems share one cache entry: embedded once
    manifest = entries[0] / "manifest.json"
    before = (manifest.stat().st_mtime_ns, (entries[0] / "vectors.npy").stat().st_mtime_ns)
    again = ragassay.run(config, new=True)  # a re-run: the cache answers, nothing is re-embedded or re-written
    assert again.failed == 0 and again.run_id != summary.run_id
    assert (manifest.stat().st_mtime_ns, (entries[0] / "vectors.npy").stat().st_mtime_ns) == before
    assert metric_table(config, again.run_id) == values
    assert json.loads(manifest.read_text())["count"] == 3


def test_dense_and_hybrid_are_listed_by_the_plugins_command():
    result = ragassay_cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    listed = {(c["kind"], c["name"]): c for c in json.loads(result.stdout)["components"]}
    for key in [
        ("retriever", "dense"),
        ("retriever", "hybrid"),
        ("embedder", "local"),
        ("embedder", "openai"),
        ("chunker", "kenneweg"),
        ("chunker", "info"),
        ("metric", "ir_map"),
        ("metric", "ndcg_at_k"),
    ]:
        assert key in listed and listed[key]["distribution"] == "ragassay", key
    assert "embedder" in listed[("retriever", "dense")]["options"]["properties"]
