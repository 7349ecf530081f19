"""The read model's clusters: each sample's conversation (else itself), read from the stored samples, and a run of
conversation turns whose verdicts, gate and plan count conversations."""

from __future__ import annotations

import json

import ragassay
from ragassay.analysis.gate import GateSettings, gate
from ragassay.analysis.gate_summary import markdown_summary
from ragassay.analysis.planning import plan_of
from ragassay.analysis.power import PowerSettings
from ragassay.analysis.verdicts import METHOD, METHOD_CLUSTERED, decide
from ragassay.results import RunData, read_run
from ragassay.store import open_store

from conftest import BASIC_CONFIG, write_project


def run_of(samples: list[dict]) -> RunData:
    ids = [s["question_id"] for s in samples]
    return RunData(None, [], {}, ids, [json.dumps(s) for s in samples], {}, None)


def test_clusters_are_conversations_else_the_sample():
    samples = [
        {"question_id": "c1::1", "question": "a", "conversation_id": "c1", "turn": 1},
        {"question_id": "c1::2", "question": "b", "conversation_id": "c1", "turn": 2},
        {"question_id": "q9", "question": "c"},
        {"question_id": "c2::1", "question": "d", "conversation_id": "c2", "turn": 1},
    ]
    run = run_of(samples)
    assert run.clusters == ["c1", "c1", "q9", "c2"]
    assert run.conversations == 3
    assert run.clusters == [s.cluster for s in run.samples]  # the contract's Sample.cluster


def test_independent_samples_have_no_conversations():
    run = run_of([{"question_id": f"q{i}", "question": "x"} for i in range(3)])
    assert run.clusters == ["q0", "q1", "q2"] and run.conversations is None


def test_a_run_of_turns_is_decided_by_conversation(tmp_path):
    qa = [
        {
            "question_id": f"c{c}::{t}",
            "question": f"Who built the alpha reactor, case {c} turn {t}?",
            "reference_answers": ["Ada Lovelace Labs"],
            "reference_context_ids": ["corpus/alpha.md"],
            "conversation_id": f"c{c}",
            "turn": t,
        }
        for c in range(4)
        for t in (1, 2, 3)
    ]
    config = write_project(tmp_path, BASIC_CONFIG, qa=qa)
    run_id = ragassay.run(config).run_id
    store = open_store(f"sqlite:///{config.parent / 'ragassay-results.db'}", create=False)
    try:
        data = read_run(store, run_id)
    finally:
        store.close()
    assert data.conversations == 4
    verdicts = decide(data)
    assert verdicts.method == METHOD_CLUSTERED != METHOD and verdicts.conversations == 4
    assert all(p.n_clusters == 4 for p in verdicts.pairs if p.n == 12)
    assert all(c.n_clusters == 4 for c in verdicts.cells if c.n == 12)
    result = gate(data, data, GateSettings(mode="superiority"), same_run=True)
    assert result.conversations == 4 and all(r.n_clusters == 4 for r in result.rows if r.n == 12)
    summary = markdown_summary(result)
    assert "12 turns in 4 conversations" in summary and "each conversation flipped whole" in summary
    plan = plan_of(data, PowerSettings())
    assert all(r.estimate.n_clusters == 4 for r in plan.rows if r.estimate.n == 12)
