"""Same inputs, same numbers: a project run in three processes with different hash seeds and different sample
orders (``[evaluation] order``: seeded with two seeds, the file's order) stores identical results.

The project is the Aurp example's data (GRAMMAR source over aurp.sql, the rendered corpus) with the keyword,
BM25 and hybrid retrievers, the extractive reader, the lexical, retrieval and IR metrics and the ``match``
judge; a second, small project adds dense retrieval (the packaged MiniLM) and hybrid over BM25 and dense.
Each ``ragassay run`` writes its own results file; the stored rows are read with sqlite3 directly.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ragassay.store.contexts import unpack

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ("0", "1", "2")
METRICS = [
    "token_recall",
    "token_f1",
    "k_precision",
    "exact_match",
    "contains_answer",
    "context_mrr",
    "recall_at_k",
    "precision_at_k",
    "ir_mrr",
    "ir_map",
    "ndcg_at_k",
    "ir_precision_at_k",
    "ir_recall_at_k",
    "hit_at_k",
    "r_precision",
]
#: Output fields compared; latency, database ids and run ids are not.
OUTPUT_FIELDS = ("answer", "contexts", "context_ids", "context_document_ids", "retrieved", "usage", "trace")
#: Trace keys that legitimately differ between processes (cache state, timings).
VOLATILE_TRACE_KEYS = {"cache", "latency_s"}

SYSTEMS_LEXICAL = """
[systems.keyword]
retriever = "keyword"
generator = "extractive"
options = { top_k = 3 }

[systems.bm25]
extends = "keyword"
retriever = "bm25"

[systems.hybrid]
extends = "keyword"
retriever = { name = "hybrid", options = { retrievers = ["keyword", "bm25"], candidates = 10 } }
"""

SYSTEMS_DENSE = """
[systems.dense]
retriever = "dense"
generator = "extractive"
options = { top_k = 3 }

[systems.hybrid]
extends = "dense"
retriever = { name = "hybrid", options = { retrievers = ["bm25", "dense"], candidates = 10 } }
"""


#: [evaluation] order per process: values never depend on the order the samples are processed in
ORDERS = ("", 'order = "seeded"\nseed = 7\n', 'order = "file"\n')


def _write_configs(folder: Path, dataset: str, systems: str) -> list[Path]:
    """One config per seed, each with its own results file and cache folder, and its own sample order (the
    default seeded order, another seed, the file's order)."""
    configs = []
    for seed, order in zip(SEEDS, ORDERS):
        config = folder / f"seed{seed}.toml"
        config.write_text(
            f'[project]\nname = "determinism"\nresults = "results-{seed}.db"\ncache_dir = "cache-{seed}"\n'
            f"concurrency = 8\n\n{dataset}\n"
            '[defaults]\nchunker = { name = "recursive", options = { size = 400, overlap = 40, title_prefix = true } }'
            "\n"
            f'{systems}\n[evaluation]\nmetrics = {json.dumps(METRICS)}\njudges = ["match"]\n{order}',
            encoding="utf-8",
        )
        configs.append(config)
    return configs


def _run(config: Path, seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-m", "ragassay", "run", "-q", str(config)],
        check=False,
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"seed {seed}: {done.stdout}\n{done.stderr}"


def _stable(value):
    """``value`` without the trace keys that are allowed to differ."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE_TRACE_KEYS}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _stored(results: Path) -> dict:
    """Every stored output, metric value and judgement, keyed by (system, question_id)."""
    with sqlite3.connect(results) as conn:
        outputs = conn.execute("SELECT id, system, question_id, status, error, output_json FROM outputs").fetchall()
        metrics = conn.execute("SELECT output_id, metric, value, unscored_reason FROM metric_values").fetchall()
        judgements = conn.execute("SELECT output_id, judge, verdict, score, explanation FROM judgements").fetchall()
        texts = dict(conn.execute("SELECT key, text FROM context_texts"))
    keys = {row[0]: (row[1], row[2]) for row in outputs}
    stored: dict = {}
    for _output_id, system, qid, status, error, output_json in outputs:
        output = unpack(output_json, texts).model_dump(mode="json") if output_json else {}
        fields = {name: _stable(output.get(name)) for name in OUTPUT_FIELDS}
        stored[(system, qid)] = {"status": status, "error": error, "output": fields, "metrics": {}, "judgements": {}}
    for output_id, metric, value, reason in metrics:
        stored[keys[output_id]]["metrics"][metric] = (value, reason)
    for output_id, judge, verdict, score, explanation in judgements:
        stored[keys[output_id]]["judgements"][judge] = (verdict, score, explanation)
    return stored


def _assert_identical(configs: list[Path]) -> dict:
    for config, seed in zip(configs, SEEDS):
        _run(config, seed)
    first, *others = [_stored(config.parent / f"results-{seed}.db") for config, seed in zip(configs, SEEDS)]
    assert first, "the run stored no outputs"
    for seed, other in zip(SEEDS[1:], others):
        assert other.keys() == first.keys()
        differing = sorted(key for key in first if first[key] != other[key])
        assert not differing, (
            f"PYTHONHASHSEED={seed} differs from 0 on {len(differing)} outputs, e.g. "
            f"{differing[0]}: {first[differing[0]]} != {other[differing[0]]}"
        )
    return first


def test_aurp_lexical_systems_store_identical_results_under_three_hash_seeds(tmp_path):
    aurp = ROOT / "examples" / "aurp"
    shutil.copytree(aurp / "corpus", tmp_path / "corpus")
    for name in ("aurp.sql", "templates.yaml"):
        shutil.copy(aurp / name, tmp_path / name)
    dataset = (
        '[dataset]\nsource = "grammar"\n\n[dataset.options]\nsql_dump = "aurp.sql"\n'
        'templates = "templates.yaml"\ndocuments = ["corpus/**/*.md"]\n'
    )
    stored = _assert_identical(_write_configs(tmp_path, dataset, SYSTEMS_LEXICAL))
    systems = {system for system, _ in stored}
    assert systems == {"keyword", "bm25", "hybrid"}
    assert all(item["status"] == "ok" for item in stored.values())
    assert all(len(item["metrics"]) == len(METRICS) for item in stored.values())


@pytest.mark.slow
def test_dense_and_hybrid_store_identical_results_under_three_hash_seeds(tmp_path):
    pytest.importorskip("faiss")
    pytest.importorskip("transformers")
    quickstart = ROOT / "examples" / "quickstart"
    shutil.copytree(quickstart / "corpus", tmp_path / "corpus")
    shutil.copy(quickstart / "qa.jsonl", tmp_path / "qa.jsonl")
    dataset = '[corpus]\npaths = ["corpus/*.md"]\n\n[dataset]\nsource = "files"\noptions = { path = "qa.jsonl" }\n'
    stored = _assert_identical(_write_configs(tmp_path, dataset, SYSTEMS_DENSE))
    assert {system for system, _ in stored} == {"dense", "hybrid"}
    assert all(item["status"] == "ok" for item in stored.values())
