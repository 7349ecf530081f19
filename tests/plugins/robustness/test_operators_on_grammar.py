"""The GRAMMAR operators on the Aurp example: every counterfactual checked against the SQLite database (the changed
value changes the SQL answer; the new expected answer is the SQL answer on the changed row), and paraphrases taken
from the sample's own text templates."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from ragassay import Chunk
from ragassay.plugins.robustness.counterfactual import whole
from ragassay.plugins.robustness.operators import Case, operator_class
from ragassay.plugins.robustness.seeding import sample_rng
from ragassay.testing import component, throwaway_context

AURP = Path(__file__).resolve().parents[3] / "examples" / "aurp"


@pytest.fixture(scope="module")
def aurp(tmp_path_factory):
    root = tmp_path_factory.mktemp("aurp")
    for name in ("aurp.sql", "templates.yaml", "corpus"):
        copy = shutil.copytree if (AURP / name).is_dir() else shutil.copy
        copy(AURP / name, root / name)
    source = component(
        "dataset_source",
        "grammar",
        context=throwaway_context(root),
        sql_dump="aurp.sql",
        templates="templates.yaml",
        documents=["corpus/**/*.md"],
    )
    docs = {d.id: d for d in source.documents()}
    return root, list(source.samples()), docs


def build(name, root, **options):
    cls = operator_class(name)
    op = cls(cls.Options.model_validate(options))
    op.prepare([], throwaway_context(root))
    return op


def gold_chunks(sample, docs):
    return tuple(Chunk(id=f"{d}#0", document_id=d, text=docs[d].text) for d in sample.reference_context_ids)


def sql_answer(conn, sql):
    rows = conn.execute(sql).fetchall()
    assert len(rows) == 1 and len(rows[0]) == 1
    value = rows[0][0]
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def test_every_counterfactual_is_the_sql_answer_on_the_changed_row(aurp):
    """Both halves of issue 25's check, on every Aurp sample: the changed value (another value of the answer's column
    on the sample's own source row) changes the SQL answer, and the new expected answer is the SQL answer run on the
    changed row. The only samples without a counterfactual are those whose answer comes from two rows of its table
    (employee_manager: a self-join), where no single changed value defines the new answer."""
    root, samples, docs = aurp
    op = build("counterfactual", root, database="aurp.sql")
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript((root / "aurp.sql").read_text(encoding="utf-8"))
    changed, skipped = 0, set()
    for sample in samples:
        out = op.apply(Case(sample, gold_chunks(sample, docs), sample_rng(0, sample.question_id, op.name)))
        assert sql_answer(conn, sample.sql) == sample.reference_answers[0] == out.original_answer
        d = out.details
        if not out.changed:
            assert "source rows of table" in d["reason"] and out.expected_answer is None, (sample.question_id, d)
            table = d["reason"].split("source rows of table ")[1].split(";")[0]
            assert sum(r.split(":")[0] == table for r in sample.source_rows) > 1
            skipped.add(sample.attributes["sql_template_id"])
            continue
        changed += 1
        assert f"{d['table']}:{d['row']}" in sample.source_rows  # the sample's own source row
        (pk,) = [r[1] for r in conn.execute(f"PRAGMA table_info({d['table']})") if r[5]]
        where = f"FROM {d['table']} WHERE {pk} = ?"
        (old,) = conn.execute(f"SELECT {d['column']} {where}", (d["row"],)).fetchone()
        assert old == d["old_value"] != d["new_value"]
        column = [v for (v,) in conn.execute(f"SELECT {d['column']} FROM {d['table']}")]
        if len(set(column)) == len(column) and d["column"] == "Name":  # a name: a new one, of the column's words
            words = {w for v in column for w in v.split()}
            assert d["new_value"] not in column and set(d["new_value"].split()) <= words
        else:
            assert d["new_value"] in column
        conn.execute("BEGIN")
        conn.execute(f"UPDATE {d['table']} SET {d['column']} = ? WHERE {pk} = ?", (d["new_value"], d["row"]))
        new_answer = sql_answer(conn, sample.sql)
        conn.execute("ROLLBACK")
        assert new_answer == out.expected_answer != out.original_answer  # the change changes the SQL answer
        rewritten = [c for c in out.chunks if c.id in d["rewritten"]]
        old, new = whole(d["old_text"]), whole(d["new_text"])
        assert rewritten and all(new.search(c.text) and not old.search(new.sub("", c.text)) for c in rewritten)
    manager = sum(s.attributes["sql_template_id"] == "employee_manager" for s in samples)
    assert skipped == {"employee_manager"} and changed == len(samples) - manager, (changed, skipped)


def test_counterfactual_without_a_database_or_gold_says_why(aurp):
    root, samples, docs = aurp
    sample = samples[0]
    no_db = build("counterfactual", root).apply(Case(sample, gold_chunks(sample, docs), sample_rng(0, "q", "c")))
    assert not no_db.changed and "no 'database' option" in no_db.details["reason"]
    no_gold = build("counterfactual", root, database="aurp.sql").apply(Case(sample, (), sample_rng(0, "q", "c")))
    assert not no_gold.changed and "appears in no retrieved gold chunk" in no_gold.details["reason"]


def test_paraphrase_uses_another_text_template_of_the_same_group(aurp):
    root, samples, _ = aurp
    by_id = {s.question_id: s for s in samples}
    op = build("paraphrase", root, templates="templates.yaml", attribute="query_length", value="long")
    for sample in samples[:40]:
        out = op.apply(Case(sample, (), sample_rng(0, sample.question_id, op.name)))
        new_id = out.details["text_template_id"]
        assert new_id != sample.text_template_id and out.details["attributes"]["query_length"] == "long"
        twin = by_id.get(f"{sample.group_id}/{new_id}")
        if twin is not None:  # the group's own question from that template: the same text
            assert out.question == twin.question
