"""Retrieval-only rag: ranked ids and scores, no answer; answer-based metrics and judges unscored, never 0."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import ragassay
from ragassay.components import Corpus
from ragassay.engine.runner import plan_run
from ragassay.models import Document, Sample
from ragassay.plugin_manager import load_plugins

from conftest import write_project

REASON = "system 'ret' is retrieval-only: it gives no answer"

CONFIG = """
[corpus]
paths = ["corpus/*"]
[dataset]
options = { path = "qa.jsonl" }
[systems.ret]
rag = "retrieval"
retriever = "bm25"
options = { top_k = 2 }
[systems.naive]
retriever = "bm25"
generator = "extractive"
options = { top_k = 2 }
"""


def build(top_k=2):
    registry = load_plugins().registry
    chunker = registry.get("chunker", "recursive").cls
    rag = registry.get("rag", "retrieval").cls
    return rag(
        rag.Options(top_k=top_k),
        parts={
            "chunker": chunker(chunker.Options(size=60, overlap=0)),
            "retriever": registry.get("retriever", "bm25").cls(),
        },
    )


def test_output_is_the_ranking_with_scores_and_no_answer():
    rag = build()
    rag.prepare(
        Corpus(
            [
                Document(id="salmon", text="Salmon swim upstream to spawn in rivers."),
                Document(id="bees", text="Bees make honey from nectar in their hives."),
                Document(id="stars", text="Stars are fusing hydrogen into helium."),
            ]
        )
    )
    output = asyncio.run(rag.answer(Sample(question_id="q", question="salmon spawn rivers honey")))
    assert output.answer == "" and output.retrieved is True and output.usage.calls == 0
    assert output.context_ids[0] == "salmon#0" and output.context_document_ids[0] == "salmon"
    assert output.contexts[0].startswith("Salmon swim") and len(output.context_ids) == 2
    scores = output.trace["scores"]
    assert len(scores) == 2 and scores[0] > scores[1]


def test_default_top_k_and_no_generator_role():
    info = load_plugins().registry.get("rag", "retrieval")
    assert info.cls.Options().top_k == 10
    assert set(info.cls.roles) == {"chunker", "retriever"} and info.cls.answers is False


def test_run_unscores_answer_metrics_and_judges_with_the_reason(tmp_path):
    path = write_project(
        tmp_path, CONFIG + '[evaluation]\nmetrics = ["contains_answer", "recall_at_k"]\njudges = ["match"]\n'
    )
    plan = plan_run(path)
    assert any("contains_answer, judge:match read the answer" in w and "ret" in w for w in plan.warnings)
    summary = ragassay.run(path)
    assert summary.failed == 0
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    values = con.execute(
        "select o.system, m.metric, m.value, m.unscored_reason from outputs o join metric_values m on m.output_id = o.id"
    ).fetchall()
    ret = [(metric, value, reason) for system, metric, value, reason in values if system == "ret"]
    assert {(m, r) for m, v, r in ret if m == "contains_answer"} == {("contains_answer", REASON)}
    assert all(v is None for m, v, r in ret if m == "contains_answer")
    recall = [v for m, v, r in ret if m == "recall_at_k"]
    assert len(recall) == 3 and all(v is not None for v in recall) and max(recall) == 1.0
    # the system that answers is scored as before
    assert all(v is not None for s, m, v, r in values if s == "naive")
    verdicts = con.execute(
        "select o.system, j.verdict, j.score, j.explanation from outputs o join judgements j on j.output_id = o.id"
    ).fetchall()
    assert {(v, s, e) for system, v, s, e in verdicts if system == "ret"} == {("unscored", None, REASON)}
    assert {v for system, v, s, e in verdicts if system == "naive"} <= {"correct", "incorrect"}
    spec = json.loads(con.execute("select spec_json from runs").fetchone()[0])
    traits = {s["name"]: s["rag"]["traits"] for s in spec["systems"]}
    assert traits == {"ret": {"retrieval": "always", "answers": False}, "naive": {"retrieval": "always"}}


def test_default_metrics_are_unscored_without_a_warning(tmp_path):
    path = write_project(tmp_path, CONFIG)
    assert not any("read the answer" in w for w in plan_run(path).warnings)
    ragassay.run(path)
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    reasons = dict(
        con.execute(
            "select m.metric, m.unscored_reason from outputs o join metric_values m on m.output_id = o.id "
            "where o.system = 'ret' and o.question_id = 'q1'"
        ).fetchall()
    )
    assert {m for m, r in reasons.items() if r == REASON} == {
        "token_recall",
        "k_precision",
        "exact_match",
        "contains_answer",
    }
    assert reasons["context_mrr"] is None and reasons["recall_at_k"] is None
