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
    root, samples, docs = aurp
    op = build("counterfactual", root, database="aurp.sql")
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript((root / "aurp.sql").read_text(encoding="utf-8"))
    changed = 0
    for sample in samples:
        out = op.apply(Case(sample, gold_chunks(sample, docs), sample_rng(0, sample.question_id, op.name)))
        if not out.changed:
            assert out.details["reason"] and out.expected_answer in (None, out.details.get("answer"))
            continue
        changed += 1
        d = out.details
        assert sql_answer(conn, sample.sql) == sample.reference_answers[0] == out.original_answer
        table, key = sample.source_rows[0].split(":", 1)
        pk = [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[5]] or ["rowid"]
        conn.execute("BEGIN")
        conn.execute(f"UPDATE {table} SET {d['column']} = ? WHERE {pk[0]} = ?", (d["new_value"], key))
        new_answer = sql_answer(conn, sample.sql)
        conn.execute("ROLLBACK")
        assert new_answer == out.expected_answer != out.original_answer  # the change changes the SQL answer
        rewritten = [c for c in out.chunks if c.id in d["rewritten"]]
        old, new = whole(d["old_text"]), whole(d["new_text"])
        assert rewritten and all(new.search(c.text) and not old.search(new.sub("", c.text)) for c in rewritten)
    assert changed >= len(samples) // 2, f"only {changed} of {len(samples)} samples got a counterfactual"


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
