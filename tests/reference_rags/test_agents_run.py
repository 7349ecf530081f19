"""decomposing_agent and iterative_agent in configured runs at a loopback model that follows their prompts: the
trajectories are stored with the outputs and read back from the results store, are the same from two processes with
different hash seeds (timings aside), and ``ragassay estimate`` counts the agents' calls."""

from __future__ import annotations

import json

import pytest

from ragassay.reference_rags.agents_prompts import DECOMPOSE_PROMPT
from ragassay.results import read_run
from ragassay.store import open_store, store_url
from tests.conftest import cli_env, ragassay_cli, write_project

from agent_server import DOCS, QUESTIONS, following
from servers.openai_chat import OpenAIChatServer

pytestmark = pytest.mark.slow
pytest.importorskip("openai")

QA = [
    {
        "question_id": f"q{i}",
        "question": question,
        "reference_answers": [answer],
        "reference_context_ids": list(gold),
        "hops": [{"index": h, "reference_context_ids": [g]} for h, g in enumerate(gold, start=1)],
    }
    for i, (question, (_, gold, answer)) in enumerate(QUESTIONS.items(), start=1)
]
CONFIG = """
    [project]
    concurrency = 2
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 300, overlap = 0 }} }}
    retriever = "bm25"
    generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1", cache = false }} }}
    [systems.decomposing]
    rag = "decomposing_agent"
    options = {{ top_k = 1 }}
    [systems.iterative]
    rag = "iterative_agent"
    options = {{ top_k = 1, max_steps = 3 }}
    [evaluation]
    metrics = ["recall_at_k", "contains_answer"]
"""
TIMINGS = {"latency_s", "started_at"}


@pytest.fixture(scope="module")
def server():
    with OpenAIChatServer(default=following) as server:
        yield server


@pytest.fixture
def fresh(server):
    return server.reset()


def env(hash_seed):
    return {**cli_env(), "PYTHONHASHSEED": hash_seed, "OPENAI_API_KEY": "sk-test-agents"}


def run_project(root, url, hash_seed):
    path = write_project(root, CONFIG.format(url=url), qa=QA, docs=DOCS)
    result = ragassay_cli("run", str(path), "-q", env=env(hash_seed))
    assert result.returncode == 0, result.stderr
    store = open_store(store_url("ragassay-results.db", root))
    try:
        run = read_run(store, store.list_runs()[0]["id"], payloads=True)
        outputs = {(s, q): run.payload(s, q) for s in run.systems for q in run.question_ids}
        recall = {(r.system, r.question_id): r.value for r in run.records(kind="metric", label="recall_at_k")}
    finally:
        store.close()
    return path, outputs, recall


def without_timings(output):
    data = output.model_dump(exclude={"latency_s"})
    data["trajectory"] = [{k: v for k, v in step.items() if k not in TIMINGS} for step in data["trajectory"]]
    for call in data["trace"].get("calls", []):
        call.pop("latency_s", None)
    return json.dumps(data, sort_keys=True)


def test_trajectories_are_stored_read_back_and_the_same_from_two_processes(server, tmp_path):
    path, first, recall = run_project(tmp_path / "a", server.url, "1")
    _, second, _ = run_project(tmp_path / "b", server.url, "2")
    assert set(first) == {(s, q) for s in ("decomposing", "iterative") for q in ("q1", "q2")}
    for (system, question_id), output in first.items():
        retrievals = [s for s in output.trajectory if s.kind == "retrieval"]
        gold = QA[int(question_id[1:]) - 1]["reference_context_ids"]
        assert [s.document_ids for s in retrievals] == [[g] for g in gold], (system, question_id)
        assert output.trajectory[-1].kind == "answer" and output.trajectory[-1].output == output.answer
        assert output.usage.input_tokens == sum(s.usage.input_tokens for s in output.trajectory if s.usage)
        assert recall[(system, question_id)] == 1.0
        assert without_timings(output) == without_timings(second[(system, question_id)]), (system, question_id)
    assert first[("decomposing", "q2")].answer == "Lisbon [2]." and first[("iterative", "q1")].answer == "Oslo [2]."


def test_the_estimate_counts_the_agents_calls_and_calls_nothing(fresh, tmp_path):
    server = fresh
    path = write_project(tmp_path, CONFIG.format(url=server.url), qa=QA, docs=DOCS)
    estimate = ragassay_cli("estimate", "-c", str(path), "--format", "json", env=env("1"))
    assert estimate.returncode == 0, estimate.stderr
    assert server.calls == 0
    rows = {r["system"]: r for r in json.loads(estimate.stdout) if r["component"] == "system"}
    decomposing, iterative = rows["decomposing"], rows["iterative"]
    assert (decomposing["calls_low"], decomposing["calls_high"]) == (2 * 2, 2 * 5)  # 2 samples, max_hops 4 + 1
    assert (iterative["calls_low"], iterative["calls_high"]) == (2 * 2, 2 * 4)  # max_steps 3 + the answer
    assert decomposing["input_tokens"] > 2 * len(DECOMPOSE_PROMPT) // 4 and iterative["input_tokens"] > 0
