"""conversational_naive and simulated_user in a configured run: conversation turns read from a JSONL file, the
retrieval query stored with each output and read back from the results store, and the same stored outputs from two
processes with different hash seeds."""

from __future__ import annotations

import json

import pytest

from ragassay.results import read_run
from ragassay.store import open_store, store_url
from tests.conftest import cli_env, ragassay_cli, write_project

pytestmark = pytest.mark.slow

DOCS = {
    "falcon.md": "Project Falcon builds a weather satellite for the northern fleet. Dana Whitfield manages Project "
    "Falcon.",
    "harbor.md": "Lee Park manages the harbor office and manages its budget.",
    "heron.md": "Project Heron restores the river wetlands. Omar Castillo leads Project Heron.",
    "bees.md": "Bees make honey from nectar in their hives.",
    "stars.md": "Stars are fusing hydrogen into helium.",
}
FIRST = "Which project builds a weather satellite?"
ANSWER_1 = "Project Falcon builds a weather satellite for the northern fleet."


def chain(standalone, refers_to, earlier=()):
    return {"sql": "", "kind": "follow", "standalone_question": standalone, "refers_to": refers_to, "earlier": earlier}


QA = [
    {
        "question_id": "c1::1",
        "question": FIRST,
        "conversation_id": "c1",
        "turn": 1,
        "reference_answers": ["Project Falcon"],
        "reference_context_ids": ["corpus/falcon.md"],
        "metadata": {"chain": chain(FIRST, None)},
    },
    {
        "question_id": "c1::2",
        "question": "And who manages it?",
        "conversation_id": "c1",
        "turn": 2,
        "history": [{"speaker": "user", "text": FIRST}, {"speaker": "agent", "text": ANSWER_1}],
        "reference_answers": ["Dana Whitfield"],
        "reference_context_ids": ["corpus/falcon.md"],
        "metadata": {
            "chain": chain(
                "Who manages Project Falcon?",
                "Project Falcon",
                [{"question": FIRST, "standalone_question": FIRST, "refers_to": None}],
            )
        },
    },
]
CONFIG = """
    [project]
    concurrency = 2
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = { path = "qa.jsonl" }
    [defaults]
    chunker = { name = "recursive", options = { size = 300, overlap = 0 } }
    [systems.last_turn]
    rag = "conversational_naive"
    retriever = "bm25"
    generator = "extractive"
    options = { top_k = 1, query = "last_turn" }
    [systems.history]
    extends = "last_turn"
    options = { top_k = 1, query = "history" }
    [systems.simulated]
    rag = "simulated_user"
    options = { system = "history" }
    [evaluation]
    metrics = ["recall_at_k", "contains_answer"]
"""


def run_project(root, hash_seed):
    path = write_project(root, CONFIG, qa=QA, docs=DOCS)
    result = ragassay_cli("run", str(path), "-q", env={**cli_env(), "PYTHONHASHSEED": hash_seed})
    assert result.returncode == 0, result.stderr
    store = open_store(store_url("ragassay-results.db", root))
    try:
        run = read_run(store, store.list_runs()[0]["id"], payloads=True)
        outputs = {(s, q): run.payload(s, q) for s in run.systems for q in run.question_ids}
        recall = {(r.system, r.question_id): r.value for r in run.records(kind="metric", label="recall_at_k")}
    finally:
        store.close()
    return outputs, recall


def test_queries_are_stored_read_back_and_the_same_from_two_processes(tmp_path):
    first, recall = run_project(tmp_path / "a", "1")
    second, _ = run_project(tmp_path / "b", "2")
    assert first[("last_turn", "c1::2")].query is None
    assert first[("history", "c1::2")].query == f"{FIRST}\nAnd who manages it?"
    assert first[("history", "c1::1")].query is None  # turn 1: the question itself
    assert (recall[("last_turn", "c1::2")], recall[("history", "c1::2")]) == (0.0, 1.0)
    simulated = first[("simulated", "c1::2")]
    turns = simulated.trace["simulated_user"]["turns"]
    assert turns[0]["agent"] == ANSWER_1 and turns[1]["phrasing"] == "dependent"
    assert simulated.query == f"{FIRST}\nAnd who manages it?" and "Dana Whitfield" in simulated.answer
    for key, output in first.items():
        mine, theirs = output.model_dump(exclude={"latency_s"}), second[key].model_dump(exclude={"latency_s"})
        assert json.dumps(mine, sort_keys=True) == json.dumps(theirs, sort_keys=True), key
