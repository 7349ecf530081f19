"""The GRAMMAR report from a real stored run: judgements, retrieved documents, failures, stored settings."""

from __future__ import annotations

import json
import textwrap

import pytest

import ragassay
from ragassay import RAGOutput, RAGSystem, hookimpl
from ragassay.analysis.report import Blame, grammar_report
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.errors import ConfigError
from ragassay.results import read_run

# group, form, answer given, documents retrieved (reference answer is always "right", reference doc "d1")
SCRIPT = {
    "g1/s": ("right", ["d1"]),
    "g1/l": ("right", ["d1"]),  # robust
    "g2/s": ("right", ["d1"]),
    "g2/l": ("wrong", ["d1"]),  # non-robust, same documents: the LM failed
    "g3/s": ("right", ["d1"]),
    "g3/l": ("wrong", ["d9"]),  # non-robust, other documents: retrieval failed
    "g4/s": ("wrong", ["d9"]),
    "g4/l": ("wrong", ["d9"]),  # gap
    "g5/s": ("right", ["d1"]),
    "g5/l": "fail",  # the long one fails: excluded and counted
}


class ScriptedRAG(RAGSystem):
    """Answers from SCRIPT."""

    name = "scripted"

    async def answer(self, sample):
        entry = SCRIPT[sample.question_id]
        if entry == "fail":
            raise RuntimeError("scripted failure")
        answer, docs = entry
        return RAGOutput(
            answer=answer, contexts=["x"] * len(docs), context_ids=[f"{d}#0" for d in docs], context_document_ids=docs
        )


class Plugin:
    @hookimpl
    def register_rags(self, register):
        register(ScriptedRAG)


@pytest.fixture
def run_project(tmp_path):
    rows = [
        {
            "question_id": qid,
            "question": f"question {qid}",
            "reference_answers": ["right"],
            "reference_context_ids": ["d1"],
            "group_id": qid.split("/")[0],
            "query_length": "short" if qid.endswith("/s") else "long",
        }
        for qid in SCRIPT
    ]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "ragassay.toml").write_text(
        textwrap.dedent("""
        [dataset]
        options = { path = "qa.jsonl" }
        [systems.s]
        rag = "t/scripted"
        [evaluation]
        metrics = []
        judges = [{ name = "match", options = { mode = "exact" } }]
        [[analysis.hypotheses]]
        name = "long is harder"
        attribute = "query_length"
        robust = ["short"]
        non_robust = ["long"]
    """)
    )
    summary = ragassay.run(tmp_path, plugins=[("t", Plugin())])
    return tmp_path, summary.run_id


def read(folder, run_id):
    store = Project(load_config(folder)).open_store()
    try:
        return read_run(store, run_id, payloads=True)
    finally:
        store.close()


def test_report_counts_groups_blame_and_exclusions(run_project):
    folder, run_id = run_project
    report = grammar_report(read(folder, run_id[:8]))
    system = report.systems[0]
    assert report.judge == "match" and system.excluded == {"failed": 1, "unscored": 0, "missing": 0}
    overall = system.overall
    assert overall.groups == {"gap": 1, "robust": 2, "non-robust": 2}  # g5 has only its short answer left
    assert (overall.total, overall.correct, overall.gap_total) == (9, 5, 2)
    assert overall.robustness == pytest.approx(5 / 7) and overall.accuracy == pytest.approx(5 / 9)
    assert overall.knowledge_accuracy == pytest.approx(4 / 5)
    assert system.blame == Blame(lm=1, retrieval=1, undetermined=0)
    assert system.blame_ground_truth == Blame(lm=1, retrieval=3, undetermined=0)
    assert system.retrieval_only.robustness == pytest.approx(5 / 6)
    rows = system.hypotheses[0].rows
    assert [r.label for r in rows] == [
        "All samples",
        "All samples +Modular Evaluation (Retrieval)",
        "All samples +Modular Evaluation (Retrieval, ground truth)",
    ]
    assert rows[0].robust.robustness == pytest.approx(1.0) and rows[0].non_robust.robustness == pytest.approx(1 / 3)


def test_the_judge_must_exist_in_the_run(run_project):
    folder, run_id = run_project
    settings = load_config(folder).config.analysis.model_copy(update={"judge": "llm"})
    with pytest.raises(ConfigError, match="judge = 'llm' did not judge run"):
        grammar_report(read(folder, run_id), settings)


def test_a_run_read_without_payloads_is_refused_not_misread(run_project):
    folder, run_id = run_project
    store = Project(load_config(folder)).open_store()
    try:
        bare = read_run(store, run_id)
    finally:
        store.close()
    with pytest.raises(ValueError, match="read without payloads"):
        grammar_report(bare)


def test_hypothesis_rows_carry_intervals_and_only_named_systems_are_tested(run_project):
    folder, run_id = run_project
    settings = load_config(folder).config.analysis
    data = read(folder, run_id)
    report = grammar_report(data)
    named = settings.model_copy(update={"hypotheses": [settings.hypotheses[0].model_copy(update={"systems": ["x"]})]})
    with pytest.raises(ConfigError, match=r"systems = \['x'\] are not in the run; its systems: s"):
        grammar_report(data, named)
    row = report.systems[0].hypotheses[0].rows[0]
    assert row.acc_test.answer in ("yes", "no", "not detectable", None)
    assert row.acc_test.difference == pytest.approx(row.robust.accuracy - row.non_robust.accuracy)
    assert row.r_test.difference == pytest.approx(row.robust.robustness - row.non_robust.robustness)
    from ragassay.cli.grammar_view import grammar_tables

    table = grammar_tables(report)[2]
    assert "accuracy diff [95% CI]" in [c.title for c in table.columns] and "not detectable" in table.notes[0]
    assert table.rows[0]["accuracy: robust higher?"] == (row.acc_test.answer or "-")
    assert not any("Eq." in n or "lambda" in n for t in grammar_tables(report) for n in [t.title, *t.notes])
