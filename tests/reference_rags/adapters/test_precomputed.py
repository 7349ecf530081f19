"""precomputed adapter: outputs from JSONL/CSV joined by question_id; missing and extra ids reported."""

from __future__ import annotations

import json
import sqlite3

from conftest import ragassay_cli, write_project

CONFIG = """
[dataset]
options = { path = "qa.jsonl" }
[systems.offline]
rag = "precomputed"
options = { path = "%s" }
[evaluation]
metrics = ["exact_match", "context_mrr"]
"""


def test_jsonl_outputs_missing_and_extra_ids(tmp_path):
    rows = [
        {"question_id": "q1", "answer": "Ada Lovelace Labs", "contexts": ["..."], "contexts_id": ["corpus/alpha.md"]},
        {"question_id": "q3", "answer": "radioactive decay"},
        {"question_id": "zz", "answer": "not in the dataset"},
    ]
    (tmp_path / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = write_project(tmp_path, CONFIG % "outputs.jsonl", docs={})
    result = ragassay_cli("run", str(path), "-q")
    assert result.returncode == 0, result.stderr
    assert "1 failed" in result.stderr and "no precomputed output for question_id 'q2'" in result.stderr
    assert "1 row(s) match no sample: zz" in result.stderr
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    em = dict(
        con.execute(
            "select o.question_id, m.value from outputs o join metric_values m on m.output_id = o.id "
            "where m.metric = 'exact_match'"
        )
    )
    assert em == {"q1": 1.0, "q3": 1.0}


def test_csv_with_json_list_cells(tmp_path):
    (tmp_path / "outputs.csv").write_text(
        "question_id,answer,contexts,context_ids\n"
        'q1,Ada Lovelace Labs,"[""built in 1999""]","[""corpus/alpha.md""]"\n'
        "q2,O'Brien,,\n"
        "q3,decay,,\n",
        encoding="utf-8",
    )
    path = write_project(tmp_path, CONFIG % "outputs.csv", docs={})
    assert ragassay_cli("run", str(path), "-q").returncode == 0
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    assert con.execute(
        "select value from metric_values m join outputs o on o.id = m.output_id "
        "where o.question_id = 'q1' and m.metric = 'context_mrr'"
    ).fetchone() == (1.0,)
    assert con.execute("select answer from outputs where question_id = 'q2'").fetchone() == ("O'Brien",)


def test_bad_file_errors_name_the_line(tmp_path):
    (tmp_path / "outputs.jsonl").write_text('{"question_id": "q1", "answer": "x"}\n{broken\n')
    path = write_project(tmp_path, CONFIG % "outputs.jsonl", docs={})
    result = ragassay_cli("run", str(path))
    assert result.returncode == 2 and "outputs.jsonl, line 2: not valid JSON" in result.stderr
    (tmp_path / "outputs.jsonl").write_text('{"question_id": "q1"}\n{"question_id": "q1"}\n')
    result = ragassay_cli("run", str(path))
    assert result.returncode == 2 and "already on line 1" in result.stderr


TIE_CONFIG = """
[dataset]
options = { path = "qa.jsonl" }
[systems.offline]
rag = "precomputed"
options = { path = "%s" }
[evaluation]
metrics = [{ name = "ir_precision_at_k", options = { k = 1 } }, "ir_mrr"]
"""
TIE_QA = [{"question_id": "q1", "question": "Which?", "reference_context_ids": ["a"]}]


def _ir_values(tmp_path) -> dict[str, float]:
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    return dict(con.execute("select m.metric, m.value from metric_values m join outputs o on o.id = m.output_id"))


def test_tied_scores_are_ordered_as_trec_eval_does(tmp_path):
    # 'a' (relevant) and 'b' tie at 0.7: trec_eval ranks ties by id descending, so 'b' first: P@1 0, MRR 0.5
    row = {
        "question_id": "q1",
        "answer": "x",
        "contexts": ["A", "B"],
        "context_ids": ["a", "b"],
        "scores": [0.7, 0.7],
        "trace": {"retriever": "mine"},
    }
    (tmp_path / "outputs.jsonl").write_text(json.dumps(row) + "\n")
    path = write_project(tmp_path, TIE_CONFIG % "outputs.jsonl", qa=TIE_QA, docs={})
    result = ragassay_cli("run", str(path), "-q")
    assert result.returncode == 0, result.stderr
    assert _ir_values(tmp_path) == {"ir_precision_at_k": 0.0, "ir_mrr": 0.5}
    stored = sqlite3.connect(tmp_path / "ragassay-results.db").execute("select output_json from outputs").fetchone()
    assert json.loads(stored[0])["trace"] == {"retriever": "mine", "scores": [0.7, 0.7]}


def test_csv_rows_with_a_missing_or_an_extra_cell_are_errors(tmp_path):
    header = "question_id,answer,context_ids\n"
    path = write_project(tmp_path, CONFIG % "outputs.csv", docs={})
    for bad, line in [("q2,O'Brien\n", 3), ("q2,O'Brien,corpus/beta.md,extra\n", 3)]:
        (tmp_path / "outputs.csv").write_text(header + "q1,Ada,corpus/alpha.md\n" + bad, encoding="utf-8")
        result = ragassay_cli("run", str(path), "-q")
        assert result.returncode == 2, result.stderr
        assert f"outputs.csv, line {line}: the row does not have one cell per column" in result.stderr
        assert "(question_id, answer, context_ids)" in result.stderr


def test_tied_scores_from_csv(tmp_path):
    (tmp_path / "outputs.csv").write_text(
        'question_id,answer,contexts,context_ids,scores\nq1,x,"[""A"", ""B""]","[""a"", ""b""]","[0.7, 0.7]"\n',
        encoding="utf-8",
    )
    path = write_project(tmp_path, TIE_CONFIG % "outputs.csv", qa=TIE_QA, docs={})
    assert ragassay_cli("run", str(path), "-q").returncode == 0
    assert _ir_values(tmp_path) == {"ir_precision_at_k": 0.0, "ir_mrr": 0.5}


def test_scores_must_match_the_contexts(tmp_path):
    row = {"question_id": "q1", "answer": "x", "context_ids": ["a", "b"], "scores": [0.7]}
    (tmp_path / "outputs.jsonl").write_text(json.dumps(row) + "\n")
    path = write_project(tmp_path, TIE_CONFIG % "outputs.jsonl", qa=TIE_QA, docs={})
    result = ragassay_cli("run", str(path))
    assert result.returncode == 2 and "outputs.jsonl, line 1: 1 scores for 2 contexts" in result.stderr


def test_an_edited_outputs_file_is_answered_afresh_not_resumed(tmp_path, host):
    """The file's content is part of the system's key: editing it makes a new run with the new answers."""
    import ragassay
    from ragassay.results import read_run
    from ragassay.store import open_store, store_url

    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text("".join(json.dumps({"question_id": f"q{i}", "answer": "wrong"}) + "\n" for i in (1, 2, 3)))
    path = write_project(tmp_path, CONFIG % "outputs.jsonl", docs={})
    first = ragassay.run(path)
    assert ragassay.run(path).run_id == first.run_id  # unchanged: a resume
    outputs.write_text(
        "".join(
            json.dumps({"question_id": q, "answer": a}) + "\n"
            for q, a in (("q1", "Ada Lovelace Labs"), ("q2", "O'Brien"), ("q3", "radioactive decay"))
        )
    )
    second = ragassay.run(path)
    assert second.run_id != first.run_id and second.reused == 0
    store = open_store(store_url("ragassay-results.db", tmp_path))
    try:
        run = read_run(store, second.run_id)
        em = {r.question_id: r.value for r in run.records(kind="metric", label="exact_match", repeat=0)}
    finally:
        store.close()
    assert em == {"q1": 1.0, "q2": 1.0, "q3": 1.0}
