"""Fill (section 3.3): distinct values, Cartesian product, bound values, the single-answer filter, provenance."""

from __future__ import annotations

from ragassay.plugins.grammar import database
from ragassay.plugins.grammar.fill import answer_text, compile_template, distinct_values, fill, render_text
from ragassay.plugins.grammar.templates import SqlTemplate, TextTemplate

from grammar_helpers import digest, make_db, project, source


def _compiled(db, sql, *texts, table=None):
    tpl = SqlTemplate(
        id="t", sql=sql, table=table, texts=[TextTemplate(id=f"x{i}", text=t) for i, t in enumerate(texts or ["q"])]
    )
    return compile_template(tpl, db.schema, db.quote, lambda t: db.schema.tables[t].primary_key)


def test_distinct_values_are_sorted_and_skip_null(tmp_path):
    db = database.open_sqlite_file(make_db(tmp_path / "shop.db"))
    with db.connect() as conn:
        assert distinct_values(conn, db.quote, "Customer", "Tier") == ["bronze", "gold", "silver"]
        assert distinct_values(conn, db.quote, "Customer", "Name") == ["Ada", "Chen", "Dupont", "O'Brien", "Zoë"]
        assert distinct_values(conn, db.quote, "Empty", "Label") == []


def test_cartesian_product_and_the_single_answer_filter(tmp_path):
    db = database.open_sqlite_file(make_db(tmp_path / "shop.db"))
    compiled = _compiled(
        db,
        "SELECT o.Item FROM Orders o JOIN Customer c ON c.CustomerID = o.CustomerID "
        "WHERE c.City = '[Customer.City]' AND c.Tier = [Customer.Tier]",
        "What did the [Customer.Tier] customer in [Customer.City] order?",
    )
    stats: dict[str, int] = {}
    with db.connect() as conn:
        values = [distinct_values(conn, db.quote, t, c) for t, c in compiled.placeholders]
        filled = list(fill(conn, compiled, values, stats))
    assert [len(v) for v in values] == [5, 3]  # 5 cities x 3 tiers
    assert stats == {"combinations": 15, "kept": 3, "multiple answers": 1, "empty": 11}  # Chen (Zürich, gold): 2 orders
    answers = {f.values: answer_text(f.answer) for f in filled}
    assert answers == {("London", "gold"): "lamp", ("Oslo", "silver"): "mirror", ("Zürich", "silver"): "desk"}
    desk = next(f for f in filled if f.values == ("Zürich", "silver"))
    assert desk.source_rows == (("Orders", (11,)), ("Customer", (2,)))
    assert render_text(compiled.texts[0][1], desk.values) == "What did the silver customer in Zürich order?"


def test_values_are_bound_never_formatted_into_sql(tmp_path):
    db = database.open_sqlite_file(make_db(tmp_path / "shop.db"))
    compiled = _compiled(db, "SELECT City FROM Customer WHERE Name = '[Customer.Name]'", "[Customer.Name]?")
    stats: dict[str, int] = {}
    with db.connect() as conn:
        filled = list(fill(conn, compiled, [["O'Brien", "x' OR '1'='1", "Zoë"]], stats))
    assert [answer_text(f.answer) for f in filled] == ["Zürich", "Oslo"]
    assert stats["empty"] == 1  # the injection attempt is just a name nobody has


def test_aggregates_keep_the_matching_rows_as_sources(tmp_path):
    db = database.open_sqlite_file(make_db(tmp_path / "shop.db"))
    compiled = _compiled(
        db,
        "SELECT SUM(o.Amount) FROM Orders o JOIN Customer c ON c.CustomerID = o.CustomerID "
        "WHERE c.Name = '[Customer.Name]'",
        "[Customer.Name]?",
    )
    with db.connect() as conn:
        filled = {f.values[0]: f for f in fill(conn, compiled, [["Chen", "Ada"]], {})}
    assert answer_text(filled["Chen"].answer) == "125"  # 45.0 + 80.0, shown without '.0'
    assert set(filled["Chen"].source_rows) == {("Orders", (12,)), ("Orders", (13,)), ("Customer", (3,))}


def test_null_answers_are_dropped(tmp_path):
    db = database.open_sqlite_file(make_db(tmp_path / "shop.db"))
    compiled = _compiled(db, "SELECT Tier FROM Customer WHERE City = '[Customer.City]'", "[Customer.City]?")
    stats: dict[str, int] = {}
    with db.connect() as conn:
        kept = [f.values[0] for f in fill(conn, compiled, [["Paris", "Lyon", "Zürich"]], stats)]
    assert kept == ["Lyon"] and stats["null answer"] == 1 and stats["multiple answers"] == 1


def test_generation_never_writes_to_the_database(tmp_path):
    project(tmp_path)
    before = digest(tmp_path / "shop.db")
    samples = list(source(tmp_path).samples())
    assert len(samples) == 11
    assert digest(tmp_path / "shop.db") == before
    assert not (tmp_path / "shop.db-wal").exists() and not (tmp_path / "shop.db-journal").exists()


def _papers_db(path):
    import sqlite3

    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE Paper (PaperID INTEGER PRIMARY KEY, Name TEXT, City TEXT);")
    con.executemany(
        "INSERT INTO Paper VALUES (?, ?, ?)",
        [(1, "New  York  Times", "New York"), (2, "", "Nowhere"), (3, "  ", "Blank"), (4, "Le Monde", "Paris")],
    )
    con.commit()
    con.close()
    return path


def test_values_keep_their_exact_whitespace_in_the_question(tmp_path):
    db = database.open_sqlite_file(_papers_db(tmp_path / "papers.db"))
    compiled = _compiled(db, "SELECT City FROM Paper WHERE Name = '[Paper.Name]'", "  Where  is [Paper.Name]\nbased? ")
    with db.connect() as conn:
        filled = {f.values[0]: f for f in fill(conn, compiled, [["New  York  Times"]], {})}
    assert render_text(compiled.texts[0][1], filled["New  York  Times"].values) == "Where is New  York  Times based?"


def test_empty_values_are_skipped_with_a_counted_reason(tmp_path):
    db = database.open_sqlite_file(_papers_db(tmp_path / "papers.db"))
    compiled = _compiled(db, "SELECT City FROM Paper WHERE Name = '[Paper.Name]'", "Where is [Paper.Name]?")
    stats: dict[str, int] = {}
    with db.connect() as conn:
        values = [distinct_values(conn, db.quote, t, c) for t, c in compiled.placeholders]
        kept = [f.values[0] for f in fill(conn, compiled, values, stats)]
    assert kept == ["Le Monde", "New  York  Times"]
    assert stats == {"combinations": 4, "empty value": 2, "kept": 2}
