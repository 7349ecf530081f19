"""no_retrieval and oracle baselines, through real runs."""

from __future__ import annotations

import json
import sqlite3

import ragassay

from conftest import QA, write_project

CONFIG = """
[corpus]
paths = ["corpus/*"]
[dataset]
options = { path = "qa.jsonl" }
[systems.none]
rag = "no_retrieval"
generator = "extractive"
[systems.oracle]
rag = "oracle"
generator = "extractive"
[evaluation]
metrics = ["contains_answer", "context_mrr", "k_precision"]
"""


def test_baselines_bracket_retrieval(tmp_path):
    path = write_project(tmp_path, CONFIG)
    summary = ragassay.run(path)
    assert summary.failed == 0
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    rows = con.execute(
        "select o.system, m.metric, m.value, m.unscored_reason, o.output_json from outputs o "
        "join metric_values m on m.output_id = o.id"
    ).fetchall()
    by = {(s, m): (v, r, json.loads(o)) for s, m, v, r, o in rows}
    # no retrieval: nothing retrieved, so retrieval metrics are unscored, and the extractive reader has
    # nothing to extract from
    assert by[("none", "context_mrr")][1] is not None and by[("none", "context_mrr")][2]["retrieved"] is False
    # the oracle gets the reference contexts: rank-1 hit, and the extractive reader finds the answer
    oracle = [v for (s, m), (v, r, o) in by.items() if s == "oracle" and m == "context_mrr"]
    assert oracle and all(v == 1.0 for v in oracle)
    contains = dict(
        con.execute(
            "select o.question_id, m.value from metric_values m join outputs o on "
            "o.id = m.output_id where o.system = 'oracle' and m.metric = 'contains_answer'"
        )
    )
    # q1's reference context ("built in 1999") does not hold the answer; the others do
    assert contains == {"q1": 0.0, "q2": 1.0, "q3": 1.0}


def test_oracle_fails_a_sample_without_reference_contexts(tmp_path):
    qa = [{"question_id": "x", "question": "Who?"}, QA[0]]  # with no sample's references the metrics are refused
    path = write_project(tmp_path, CONFIG, qa=qa)
    summary = ragassay.run(path)
    assert [f[:2] for f in summary.failures] == [("oracle", "x")]
    assert "no reference_contexts" in summary.failures[0][2]
