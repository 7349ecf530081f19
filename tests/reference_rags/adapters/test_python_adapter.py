"""python adapter: the user's callable answers, from a module on a configured path."""

from __future__ import annotations

import sqlite3
import textwrap

from conftest import ragassay_cli, write_project

USER_RAG = """
import asyncio

def answer(question):
    return {"answer": "Ada Lovelace Labs" if "alpha" in question else "unknown",
            "contexts": ["The alpha reactor was built in 1999 by Ada Lovelace Labs."],
            "contexts_id": ["corpus/alpha.md"]}

async def answer_async(question, sample):
    await asyncio.sleep(0)
    return f"{sample.question_id}: {question}"

def broken(question):
    return 42

def verbose(question):  # q1: a 3 MiB context; the others a few bytes
    return {"answer": "ok", "contexts": ["x" * (3 * 1024 * 1024) if "alpha" in question else "short"]}
"""


def config(callable_, extra=""):
    return f"""
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [systems.mine]
    rag = "python"
    options = {{ callable = "{callable_}", path = ["src"] {extra} }}
    [evaluation]
    metrics = ["exact_match", "context_mrr"]
    """


def test_sync_function_with_unitxt_fields(tmp_path):
    path = write_project(tmp_path, config("user_rag:answer"), docs={})
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "user_rag.py").write_text(textwrap.dedent(USER_RAG))
    result = ragassay_cli("run", str(path), "-q")
    assert result.returncode == 0, result.stderr
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    values = dict(
        con.execute(
            "select o.question_id || '/' || m.metric, m.value from outputs o join metric_values m on m.output_id = o.id"
        )
    )
    assert values["q1/exact_match"] == 1.0 and values["q1/context_mrr"] == 1.0
    assert values["q2/exact_match"] == 0.0 and values["q2/context_mrr"] == 0.0


def test_async_function_with_sample_and_bad_returns(tmp_path):
    path = write_project(tmp_path, config("user_rag:answer_async", ", pass_sample = true"), docs={})
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "user_rag.py").write_text(textwrap.dedent(USER_RAG))
    assert ragassay_cli("run", str(path), "-q").returncode == 0
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    assert con.execute("select answer from outputs where question_id = 'q3'").fetchone() == (
        "q3: Where do gamma rays come from?",
    )
    path.write_text(path.read_text().replace("answer_async", "broken").replace(", pass_sample = true", ""))
    result = ragassay_cli("run", str(path), "-q")
    assert result.returncode == 0 and "3 failed" in result.stderr
    assert "user_rag:broken returned int" in result.stderr


def test_import_errors_are_config_errors(tmp_path):
    path = write_project(tmp_path, config("no_such_module:answer"), docs={})
    result = ragassay_cli("run", str(path))
    assert result.returncode == 2 and "cannot import 'no_such_module'" in result.stderr
    path.write_text(path.read_text().replace("no_such_module:answer", "no_colon"))
    result = ragassay_cli("run", str(path))
    assert result.returncode == 2 and "must be 'module:function'" in result.stderr


def test_editing_the_callables_module_makes_a_new_run(tmp_path):
    """The module's source is part of the system's key: a code change is answered afresh, not resumed."""
    path = write_project(tmp_path, config("user_rag:answer"), docs={})
    (tmp_path / "src").mkdir()
    module = tmp_path / "src" / "user_rag.py"
    module.write_text(textwrap.dedent(USER_RAG))
    assert ragassay_cli("run", str(path), "-q").returncode == 0
    again = ragassay_cli("run", str(path), "-q")
    assert "resuming run" in again.stderr
    module.write_text(textwrap.dedent(USER_RAG).replace('else "unknown"', 'else "O\'Brien"'))
    changed = ragassay_cli("run", str(path), "-q")
    assert changed.returncode == 0, changed.stderr
    assert "starting run" in changed.stderr and "0 reused" in changed.stderr
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    answers = {a for (a,) in con.execute("select answer from outputs where question_id = 'q2'")}
    assert answers == {"unknown", "O'Brien"}  # both runs kept, the new one with the new code's answer


def test_an_answer_over_max_bytes_fails_its_unit_and_is_not_stored(tmp_path):
    path = write_project(tmp_path, config("user_rag:verbose", ", max_bytes = 2097152"), docs={})
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "user_rag.py").write_text(textwrap.dedent(USER_RAG))
    result = ragassay_cli("run", str(path), "-q")
    assert result.returncode == 0 and "1 failed" in result.stderr, result.stderr
    assert "OutputTooLarge: user_rag:verbose returned 3.0 MiB or more of text" in result.stderr
    assert "over max_bytes = 2,097,152 (2 MiB)" in result.stderr
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    rows = dict(con.execute("select question_id, status from outputs"))
    assert rows == {"q1": "failed", "q2": "ok", "q3": "ok"}
    assert con.execute("select max(length(coalesce(output_json, ''))) from outputs").fetchone()[0] < 10_000
