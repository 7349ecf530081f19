"""SQL template text and the templates file: SELECT-only check, placeholders to binds, validation messages."""

from __future__ import annotations

import pytest

from ragassay.errors import DatasetError
from ragassay.plugins.grammar import database
from ragassay.plugins.grammar.sqltext import (
    bind_placeholders,
    clauses,
    display_sql,
    select_columns,
    select_only_problems,
    table_refs,
)
from ragassay.plugins.grammar.templates import SqlTemplate, TextTemplate, load_templates, template_problems

from grammar_helpers import make_db, write


@pytest.mark.parametrize(
    "sql, expected",
    [
        ("SELECT Industry FROM Company WHERE Name = '[Company.Name]';", None),
        ("  with x as (select 1) select * from x", None),
        ("SELECT replace(Name, 'a', 'b') FROM T WHERE Id = [T.Id]", None),
        ("DELETE FROM Company", "not a SELECT query"),
        ("SELECT 1; DROP TABLE Company", "more than one statement"),
        ("SELECT a FROM t -- sneaky", "comment"),
        ("WITH x AS (DELETE FROM t RETURNING 1) SELECT 1", "uses DELETE"),
        ("SELECT a INTO backup FROM t", "uses INTO"),
        ("SELECT a FROM t WHERE b = 'unterminated", "unterminated string literal"),
        ("SELECT (a FROM t", "unbalanced parentheses"),
        ("", "empty"),
    ],
)
def test_select_only_check(sql, expected):
    problems = select_only_problems(sql)
    if expected is None:
        assert problems == []
    else:
        assert any(expected in p for p in problems), problems


def test_keywords_inside_literals_are_data_not_sql():
    assert select_only_problems("SELECT a FROM t WHERE note = 'please DROP; DELETE'") == []


def test_placeholders_become_bind_parameters_quoted_or_bare_and_repeated():
    bound = bind_placeholders(
        "SELECT c.Name FROM Client c WHERE c.Name = \u2019[Client.Name]\u2019 "
        'OR c.Alias = "[client.name]" AND c.City = [Client.City];'
    )
    assert bound.sql == "SELECT c.Name FROM Client c WHERE c.Name = :p0 OR c.Alias = :p0 AND c.City = :p1"
    assert bound.placeholders == (("Client", "Name"), ("Client", "City"))


def test_placeholder_inside_a_longer_literal_is_refused():
    with pytest.raises(ValueError, match="placeholder inside the literal"):
        bind_placeholders("SELECT a FROM T WHERE n LIKE '%[T.n]%'")


def test_clause_and_reference_parsing():
    sql = bind_placeholders(
        "SELECT DISTINCT m.Name AS boss, COUNT(*) FROM Employee m JOIN Employee e "
        "ON e.ManagerID = m.EmployeeID WHERE e.Name = '[Employee.Name]' GROUP BY m.Name"
    ).sql
    parts = clauses(sql)
    assert parts["WHERE"] == "e.Name = :p0" and parts["GROUP BY"] == "m.Name"
    assert table_refs(parts["FROM"]) == [("Employee", "m"), ("Employee", "e")]
    assert select_columns(parts["SELECT"]) == [("m", "Name"), None]


def test_display_sql_quotes_values_safely():
    shown = display_sql(
        "SELECT City FROM Customer WHERE Name = '[Customer.Name]' AND Id = [Customer.Id]",
        {("Customer", "Name"): "O'Brien", ("Customer", "Id"): 2},
    )
    assert shown == "SELECT City FROM Customer WHERE Name = 'O''Brien' AND Id = 2"


def test_display_sql_substitutes_each_placeholder_once():
    """A value that looks like a placeholder stays as it is (it used to be substituted a second time)."""
    template = (
        "SELECT City FROM Customer WHERE Name = '[Customer.Name]' AND Id = [Customer.Id] AND Nick = [Customer.Nick]"
    )
    shown = display_sql(
        template,
        {("Customer", "Name"): "[Customer.Id]", ("Customer", "Id"): 2, ("Customer", "Nick"): "[Customer.Name]"},
    )
    assert shown == ("SELECT City FROM Customer WHERE Name = '[Customer.Id]' AND Id = 2 AND Nick = '[Customer.Name]'")


def test_templates_file_yaml_and_toml(tmp_path):
    yaml_file = write(
        tmp_path / "t.yaml",
        """
        templates:
          - id: a
            sql: SELECT City FROM Customer WHERE Name = '[Customer.Name]'
            texts: [{ id: s, text: "Where is [Customer.Name]?", attributes: { query_length: short } }]
        """,
    )
    toml_file = write(
        tmp_path / "t.toml",
        """
        [[templates]]
        id = "a"
        sql = "SELECT City FROM Customer WHERE Name = '[Customer.Name]'"
        texts = [{ id = "s", text = "Where is [Customer.Name]?", attributes = { query_length = "short" } }]
        """,
    )
    assert load_templates(yaml_file) == load_templates(toml_file)
    assert load_templates(yaml_file).templates[0].texts[0].attributes == {"query_length": "short"}


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "templates:\n  - {id: a, sql: 'SELECT 1', texts: [{id: s, text: x}]}\n"
            "  - {id: a, sql: 'SELECT 2', texts: [{id: s, text: y}]}\n",
            "template id 'a' appears twice",
        ),
        (
            "templates:\n  - {id: a, sql: 'SELECT 1', texts: [{id: s, text: x, attributes: {group_id: 1}}]}\n",
            "attribute group_id is reserved",
        ),
        ("templates:\n  - {id: a, sql: 'SELECT 1', texts: []}\n", "texts"),
        ("templates: [\n", "not valid YAML"),
    ],
)
def test_bad_templates_files_are_reported(tmp_path, body, message):
    with pytest.raises(DatasetError, match=message):
        load_templates(write(tmp_path / "t.yaml", body))


def test_missing_templates_file_says_what_to_do(tmp_path):
    with pytest.raises(DatasetError, match="templates file not found.*generate"):
        load_templates(tmp_path / "nope.yaml")


def _tpl(sql: str, *texts: str) -> SqlTemplate:
    return SqlTemplate(id="t", sql=sql, texts=[TextTemplate(id=f"x{i}", text=t) for i, t in enumerate(texts)])


@pytest.mark.parametrize(
    "tpl, message",
    [
        (_tpl("SELECT City FROM Client WHERE Name = '[Client.Name]'", "[Client.Name]?"), "no table 'Client' (tables: "),
        (
            _tpl("SELECT City FROM Customer WHERE Nom = '[Customer.Nom]'", "[Customer.Nom]?"),
            "table Customer has no column 'Nom' (columns: CustomerID, Name, City, Tier)",
        ),
        (_tpl("UPDATE Customer SET City = 'x' WHERE Name = '[Customer.Name]'", "[Customer.Name]"), "only SELECT"),
        (_tpl("SELECT City FROM Customer", "Where?"), "has no [Table.Column] placeholder"),
        (
            _tpl("SELECT Town FROM Customer WHERE Name = '[Customer.Name]'", "[Customer.Name]?"),
            "does not run on the database: no such column: Town",
        ),
        (
            _tpl("SELECT City FROM Customer WHERE Name = '[Customer.Name]'", "Where does she live?"),
            "does not mention [customer.name]",
        ),
        (
            _tpl("SELECT City FROM Customer WHERE Name = '[Customer.Name]'", "[Customer.Name] in [Customer.Tier]?"),
            "mentions [customer.tier], which the SQL template does not use",
        ),
    ],
)
def test_template_validation_names_the_problem(tmp_path, tpl, message):
    db = database.open_sqlite_file(make_db(tmp_path / "shop.db"))
    with db.connect() as conn:
        problems = template_problems(tpl, db.schema, conn)
    assert any(message in p for p in problems), problems


def test_a_valid_template_has_no_problem_and_placeholders_match_case_insensitively(tmp_path):
    db = database.open_sqlite_file(make_db(tmp_path / "shop.db"))
    tpl = _tpl("select city from customer where name = '[customer.NAME]'", "Where is [Customer.Name]?")
    with db.connect() as conn:
        assert template_problems(tpl, db.schema, conn) == []


def test_the_sql_check_parses_instead_of_matching_keywords():
    # columns named like keywords are data, not writes; malformed SQL is caught before it reaches the database
    assert select_only_problems("SELECT Lock, Copy FROM Locker WHERE Id = [Locker.Id]") == []
    assert any("does not parse" in p for p in select_only_problems("SELECT a FROM t WHERE"))
    assert any("does not parse" in p for p in select_only_problems("SELECT a FROM t WHERE b = 1 1"))
