"""The grammar dataset source: databases, samples and their fields, documents mapping, plan, bad input."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from ragassay.errors import DatasetError
from ragassay.plugin_manager import load_plugins

from grammar_helpers import TEMPLATES, project, source, write

AURP = Path(__file__).resolve().parents[3] / "examples" / "aurp"


def test_samples_carry_group_template_attributes_answer_and_sources(tmp_path):
    samples = {s.question_id: s for s in source(project(tmp_path)).samples()}
    obrien = next(
        s for s in samples.values() if s.placeholders == {"Customer.Name": "O'Brien"} and s.text_template_id == "l"
    )
    assert obrien.question == "Could you please tell me in which city the customer O'Brien lives?"
    assert obrien.reference_answers == ["Zürich"]
    assert obrien.group_id.startswith("city/") and obrien.question_id == f"{obrien.group_id}/l"
    assert obrien.sql == "SELECT City FROM Customer WHERE Name = 'O''Brien'"
    assert obrien.attributes["query_length"] == "long" and obrien.sql_template_id == "city"
    assert obrien.table == "Customer" and obrien.source_rows == ["Customer:2"]
    assert obrien.reference_context_ids == ["docs/customer-2.md"]
    group = [s for s in samples.values() if s.group_id == obrien.group_id]
    assert {s.text_template_id for s in group} == {"s", "l"} and {s.reference_answers[0] for s in group} == {"Zürich"}
    assert not any("Dupont" in s.question for s in samples.values())  # two answers: dropped (Appendix J)


def test_join_sample_maps_both_rows_to_documents(tmp_path):
    samples = list(source(project(tmp_path)).samples())
    desk = next(s for s in samples if s.reference_answers == ["desk"])
    assert desk.table == "Orders" and desk.source_rows == ["Orders:11", "Customer:2"]
    assert desk.reference_context_ids == ["docs/order-11.md", "docs/customer-2.md"]


def test_column_specific_document_mapping_wins_for_that_answer(tmp_path):
    project(tmp_path)
    src = source(tmp_path, document_map={"Customer.City": "docs/cities/{City}.md"})
    samples = list(src.samples())
    obrien = next(s for s in samples if s.placeholders == {"Customer.Name": "O'Brien"})
    assert obrien.reference_context_ids == ["docs/cities/Zürich.md"]


@pytest.mark.parametrize(
    "mapping, message",
    [
        ({"Client": "x-{ClientID}.md"}, "documents mapping 'Client': no table 'Client'"),
        ({"Customer.Town": "x.md"}, "table Customer has no column 'Town'"),
        ({"Customer": "x-{Slug}.md"}, "uses {Slug}, which is not a column of Customer"),
    ],
)
def test_bad_document_mappings_are_reported(tmp_path, mapping, message):
    with pytest.raises(DatasetError, match=message):
        list(source(project(tmp_path), document_map=mapping).samples())


def test_mapped_ids_must_exist_in_the_corpus_when_documents_are_given(tmp_path):
    project(tmp_path)
    write(tmp_path / "docs" / "customer-1.md", "# Ada\n\nAda lives in London.\n")
    src = source(tmp_path, documents=["docs/*.md"])
    assert [d.id for d in src.documents()] == ["docs/customer-1.md"]
    with pytest.raises(DatasetError, match="no corpus document has that id"):
        list(src.samples())


def test_plan_counts_m_n_q_without_generating(tmp_path):
    plan = source(project(tmp_path)).plan()
    by_id = {row["template"]: row for row in plan}
    assert by_id["city"]["Q"] == 5 and by_id["city"]["N"] == 2 and by_id["city"]["N x Q"] == 10
    assert by_id["item"]["Q"] == 15 and by_id["item"]["placeholders"] == "Customer.City (5), Customer.Tier (3)"
    assert plan[-1]["template"] == "total (M = 2)" and plan[-1]["N x Q"] == 25


def test_an_empty_column_gives_no_samples_and_a_plan_note(tmp_path):
    templates = TEMPLATES.replace(
        "SELECT City FROM Customer WHERE Name = '[Customer.Name]'",
        "SELECT EmptyID FROM Empty WHERE Label = '[Empty.Label]'",
    ).replace("[Customer.Name]", "[Empty.Label]")
    src = source(project(tmp_path, templates))
    assert src.plan()[0]["note"] == "column has no values" and src.plan()[0]["Q"] == 0
    assert {s.sql_template_id for s in src.samples()} == {"item"}


def test_samples_stream(tmp_path):
    project(tmp_path)
    first = next(iter(source(tmp_path).samples()))
    assert first.sql_template_id == "city"
    assert len(list(itertools.islice(source(tmp_path).samples(), 3))) == 3


def test_sql_dump_and_url_give_the_same_samples(tmp_path):
    project(tmp_path)
    dump = "\n".join(sqlite3.connect(tmp_path / "shop.db").iterdump())
    write(tmp_path / "shop.sql", dump)
    by_path = [s.model_dump() for s in source(tmp_path).samples()]
    by_dump = [s.model_dump() for s in source(tmp_path, sql_dump="shop.sql").samples()]
    by_url = [s.model_dump() for s in source(tmp_path, url="sqlite:///shop.db").samples()]
    assert by_path == by_dump == by_url and len(by_path) == 11


@pytest.mark.parametrize(
    "options, message",
    [
        ({"path": "missing.db"}, "database file not found"),
        ({"path": "."}, "is a folder; give the SQLite database file"),
        ({"path": "garbage.db"}, "cannot read the database .*file is not a database"),
        ({"url": "not a url"}, "is not a SQLAlchemy URL"),
        ({"url": "postgresql+nodriver://u:secret@host/db"}, "cannot open the database"),
        ({"sql_dump": "broken.sql"}, "does not load"),
        ({"path": "shop.db", "templates": "missing.yaml"}, "templates file not found"),
        ({"path": "empty.db"}, "has no tables"),
    ],
)
def test_databases_that_cannot_be_used_give_one_clear_error(tmp_path, options, message):
    project(tmp_path)
    (tmp_path / "garbage.db").write_bytes(b"this is not a database at all" * 10)
    write(tmp_path / "broken.sql", "CREATE TABLE x (;")
    sqlite3.connect(tmp_path / "empty.db").close()
    with pytest.raises(DatasetError, match=message) as info:
        list(source(tmp_path, **options).samples())
    assert "secret" not in str(info.value)


def test_exactly_one_database_option():
    with pytest.raises(ValidationError, match="exactly one of path, url or sql_dump"):
        source(Path("."), path="a.db", url="sqlite:///b.db")


def test_an_invalid_template_stops_with_its_id_and_reason(tmp_path):
    templates = TEMPLATES.replace("SELECT City FROM Customer WHERE Name", "DELETE FROM Customer WHERE Name")
    with pytest.raises(DatasetError, match="template 'city': is not a SELECT query"):
        list(source(project(tmp_path, templates)).samples())
    assert sqlite3.connect(tmp_path / "shop.db").execute("SELECT COUNT(*) FROM Customer").fetchone()[0] == 6


def test_the_source_is_registered_through_the_entry_point():
    host = load_plugins()
    assert host.registry.get("dataset_source", "grammar").plugin == "grammar"
    assert host.registry.get("judge", "grammar_llm").plugin == "grammar"


def test_aurp_example_has_table5_scale_and_hundreds_of_grounded_pairs(tmp_path):
    src = source(AURP, sql_dump="aurp.sql", templates="templates.yaml", documents=["corpus/**/*.md"])
    db = src._prepare().db
    with db.connect() as conn:
        rows = {name: conn.exec_driver_sql(f"SELECT COUNT(*) FROM {name}").scalar() for name in db.schema.tables}
    schema = db.schema
    attributes = sum(len(t.columns) - len(t.primary_key) for t in schema.tables.values())
    assert rows == {"Client": 10, "Employee": 29, "Project": 10} and attributes == 14
    samples = list(src.samples())
    assert len(samples) == 832 and len({s.group_id for s in samples}) == 208
    assert {s.query_length for s in samples} == {"short", "long"}
    corpus = {d.id for d in src.documents()}
    assert len(corpus) == 50 and all(
        set(s.reference_context_ids) <= corpus and s.reference_context_ids for s in samples
    )


def test_the_summary_counts_combinations_skipped_for_an_empty_value(tmp_path):
    con = sqlite3.connect(tmp_path / "papers.db")
    con.executescript(
        "CREATE TABLE Paper (PaperID INTEGER PRIMARY KEY, Name TEXT, City TEXT);"
        "INSERT INTO Paper VALUES (1, 'New  York  Times', 'New York'), (2, '', 'Nowhere');"
    )
    con.commit()
    con.close()
    (tmp_path / "templates.yaml").write_text(
        "templates:\n  - id: city\n    sql: SELECT City FROM Paper WHERE Name = '[Paper.Name]'\n"
        '    texts:\n      - { id: s, text: "Where is [Paper.Name]?" }\n',
        encoding="utf-8",
    )
    papers = source(tmp_path, path="papers.db")
    assert [s.question for s in papers.samples()] == ["Where is New  York  Times?"]
    assert papers.summary() == [
        {
            "template": "city",
            "combinations": 2,
            "kept": 1,
            "empty": 0,
            "multiple answers": 0,
            "null answer": 0,
            "empty value": 1,
        }
    ]
