"""Per-hop gold of GRAMMAR join templates: on examples/aurp equal to what the SQL touches, executed hop by hop with
sqlite3; on the hops test database (2- and 3-hop joins, USING, an aggregate) equal to a hand-written table; join
paths read from ON, USING and WHERE; paths that cannot be read are warned of; chains' turns carry hops too."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ragassay.components import ComponentContext
from ragassay.plugins.grammar.chains import GrammarChainsSource
from ragassay.plugins.grammar.source import GrammarSource

REPO = Path(__file__).resolve().parents[3]
AURP = REPO / "examples" / "aurp"
HOPS_DB = REPO / "tests" / "data" / "hops_db"

#: Each Aurp join template as the test walks it: the filtered table, its key and the filtered column, then each next
#: hop as (the column of the previous hop's row that links, the next table, its key). Written from the SQL by hand.
AURP_PATHS = {
    "project_client": ("Project", "ProjectID", "Name", [("ClientID", "Client", "ClientID")]),
    "project_manager": ("Project", "ProjectID", "Name", [("ManagerID", "Employee", "EmployeeID")]),
    "employee_manager": ("Employee", "EmployeeID", "Name", [("ManagerID", "Employee", "EmployeeID")]),
}
AURP_DOCS = {
    "Project": "corpus/projects/project-{}.md",
    "Employee": "corpus/employees/employee-{}.md",
    "Client": "corpus/clients/client-{}.md",
}


def grammar(folder: Path, tmp_path: Path, **options) -> tuple[list, ComponentContext]:
    context = ComponentContext(project_dir=folder, cache_dir=tmp_path / ".cache")
    source = GrammarSource(GrammarSource.Options.model_validate(options), context=context)
    return list(source.samples()), context


@pytest.fixture(scope="module")
def aurp_samples(tmp_path_factory):
    samples, context = grammar(AURP, tmp_path_factory.mktemp("aurp"), sql_dump="aurp.sql", documents=["corpus/**/*.md"])
    assert context.warnings == []
    return samples


def walk(db: sqlite3.Connection, path: tuple, value: str) -> list[list[str]]:
    """The documents of each hop, executing the path one hop at a time."""
    table, key, column, steps = path
    keys = [r[0] for r in db.execute(f"SELECT {key} FROM {table} WHERE {column} = ? ORDER BY {key}", (value,))]
    hops = [[AURP_DOCS[table].format(k) for k in keys]]
    for link, next_table, next_key in steps:
        marks = ", ".join("?" * len(keys))
        sql = f"SELECT DISTINCT {link} FROM {table} WHERE {key} IN ({marks}) AND {link} IS NOT NULL ORDER BY {link}"
        linked = [r[0] for r in db.execute(sql, keys)]
        keys = [
            r[0]
            for r in db.execute(
                f"SELECT {next_key} FROM {next_table} WHERE {next_key} IN "
                f"({', '.join('?' * len(linked))}) ORDER BY {next_key}",
                linked,
            )
        ]
        hops.append([AURP_DOCS[next_table].format(k) for k in keys])
        table, key = next_table, next_key
    return hops


def test_aurp_join_questions_carry_the_gold_of_each_hop_the_sql_touches(aurp_samples):
    templates = yaml.safe_load((AURP / "templates.yaml").read_text(encoding="utf-8"))["templates"]
    joins = {t["id"] for t in templates if re.search(r"\bJOIN\b", t["sql"], re.I)}
    assert joins == set(AURP_PATHS)  # every join template of the example is walked below
    db = sqlite3.connect(":memory:")
    db.executescript((AURP / "aurp.sql").read_text(encoding="utf-8"))
    checked = 0
    for sample in aurp_samples:
        path = AURP_PATHS.get(sample.sql_template_id)
        if path is None:
            assert sample.hops == [] and sample.hop_count == 1, sample.question_id
            continue
        (value,) = sample.placeholders.values()
        expected = walk(db, path, value)
        assert [h.reference_context_ids for h in sample.hops] == expected, sample.question_id
        assert [h.index for h in sample.hops] == [1, 2] and sample.hop_count == 2
        names = [path[0]] + [step[1] for step in path[3]]
        assert [h.description for h in sample.hops] == [names[0], f"{names[0]} -> {names[1]}"]
        assert {d for h in sample.hops for d in h.reference_context_ids} == set(sample.reference_context_ids)
        checked += 1
    assert checked == 192  # 40 projects x 4 texts x 2 templates + 28 employees with a manager x 4 texts


HAND = {  # the hops database, by hand: (template, value) -> hop_count, [(description, gold)]
    ("employee_title", "Ana Silva"): (1, []),
    ("employee_department", "Ben Okoro"): (
        2,
        [("Employee", ["docs/employee-101.md"]), ("Employee -> Department", ["docs/department-11.md"])],
    ),
    ("employee_city", "Ana Silva"): (
        3,
        [
            ("Employee", ["docs/employee-100.md"]),
            ("Employee -> Department", ["docs/department-10.md"]),
            ("Department -> Site", ["docs/site-1.md"]),
        ],
    ),
    ("employee_city", "Dee Lund"): (
        3,
        [
            ("Employee", ["docs/employee-103.md"]),
            ("Employee -> Department", ["docs/department-12.md"]),
            ("Department -> Site", ["docs/site-2.md"]),
        ],
    ),
    ("department_city", "Build"): (  # JOIN ... USING (SiteID)
        2,
        [("Department", ["docs/department-11.md"]), ("Department -> Site", ["docs/site-2.md"])],
    ),
    ("department_staff", "Build"): (  # COUNT(*): the path ends at the table farthest from the filtered one
        2,
        [
            ("Department", ["docs/department-11.md"]),
            ("Department -> Employee", ["docs/employee-101.md", "docs/employee-102.md"]),
        ],
    ),
}


def test_the_hops_database_gives_the_hand_written_hops(tmp_path):
    samples, context = grammar(HOPS_DB, tmp_path, sql_dump="hops.sql")
    assert context.warnings == []
    by_key = {(s.sql_template_id, next(iter(s.placeholders.values()))): s for s in samples}
    for key, (count, hops) in HAND.items():
        sample = by_key[key]
        assert sample.hop_count == count, key
        assert [(h.description, h.reference_context_ids) for h in sample.hops] == hops, key
        assert [h.index for h in sample.hops] == list(range(1, len(hops) + 1))
        assert all(h.question is None for h in sample.hops)
    assert {s.hop_count for s in samples} == {1, 2, 3}


def templates_file(folder: Path, *sqls: str) -> Path:
    body = {
        "templates": [
            {"id": f"t{i}", "sql": sql, "texts": [{"id": "q", "text": f"Ask {i} {_placeholders(sql)}?"}]}
            for i, sql in enumerate(sqls)
        ],
        "documents": {
            "Site": "docs/site-{SiteID}.md",
            "Department": "docs/department-{DepartmentID}.md",
            "Employee": "docs/employee-{EmployeeID}.md",
        },
    }
    (folder / "templates.yaml").write_text(yaml.safe_dump(body), encoding="utf-8")
    return folder


def _placeholders(sql: str) -> str:
    return " ".join(re.findall(r"\[[^\]]+\]", sql))


def test_paths_read_from_where_joins_and_two_filtered_tables(tmp_path):
    folder = templates_file(
        tmp_path,
        # an implicit join in WHERE, unqualified columns resolved through the schema
        "SELECT s.City FROM Site s, Department d WHERE d.SiteID = s.SiteID AND d.Name = '[Department.Name]'",
        # filtered on two tables: the path starts at the one farthest from the answered table; a hop keeps only the
        # rows that lead to the answer (Site 2 has two departments, the Welder works in one)
        "SELECT e.Name FROM Employee e JOIN Department d ON e.DepartmentID = d.DepartmentID JOIN Site s "
        "ON d.SiteID = s.SiteID WHERE s.City = '[Site.City]' AND e.Title = '[Employee.Title]'",
        # filtered and answered on the same table: one hop, though the query joins
        "SELECT e.Title FROM Employee e JOIN Department d ON e.DepartmentID = d.DepartmentID "
        "WHERE e.Name = '[Employee.Name]'",
    )
    samples, context = grammar(folder, tmp_path, sql_dump=str(HOPS_DB / "hops.sql"))
    assert context.warnings == []
    first = next(s for s in samples if s.sql_template_id == "t0" and s.placeholders["Department.Name"] == "Audit")
    assert [(h.description, h.reference_context_ids) for h in first.hops] == [
        ("Department", ["docs/department-12.md"]),
        ("Department -> Site", ["docs/site-2.md"]),
    ]
    second = next(s for s in samples if s.sql_template_id == "t1" and s.placeholders["Employee.Title"] == "Welder")
    assert [h.description for h in second.hops] == ["Site", "Site -> Department", "Department -> Employee"]
    assert [h.reference_context_ids for h in second.hops] == [
        ["docs/site-2.md"],
        ["docs/department-11.md"],
        ["docs/employee-102.md"],
    ]
    assert {s.hop_count for s in samples if s.sql_template_id == "t2"} == {1}
    assert all(s.hops == [] for s in samples if s.sql_template_id == "t2")


def test_a_path_that_cannot_be_read_is_warned_of_and_gives_no_hops(tmp_path):
    folder = templates_file(
        tmp_path,
        "SELECT Name FROM Site WHERE City = '[Site.City]' UNION SELECT Name FROM Department WHERE Name = 'x'",
        "SELECT s.Name FROM Site s JOIN Employee e ON 1 = 1 WHERE e.Name = '[Employee.Name]'",
    )
    samples, context = grammar(folder, tmp_path, sql_dump=str(HOPS_DB / "hops.sql"))
    assert len(context.warnings) == 2
    assert "template 't0': no per-hop gold (not a plain SELECT" in context.warnings[0]
    assert (
        "template 't1': no per-hop gold (no join connects the filtered table (e) to the answered one (s))"
        in (context.warnings[1])
    )
    assert samples and all(s.hops == [] and "hop_count" not in s.attributes for s in samples)


def test_without_a_documents_mapping_the_hop_count_stays_and_no_hops_are_given(tmp_path):
    folder = tmp_path / "nomap"
    folder.mkdir()
    body = yaml.safe_load((HOPS_DB / "templates.yaml").read_text(encoding="utf-8"))
    body.pop("documents")
    (folder / "templates.yaml").write_text(yaml.safe_dump(body), encoding="utf-8")
    samples, _ = grammar(folder, tmp_path, sql_dump=str(HOPS_DB / "hops.sql"))
    city = [s for s in samples if s.sql_template_id == "employee_city"]
    assert city and all(s.hop_count == 3 and s.hops == [] for s in city)


def test_chain_turns_carry_hops(tmp_path):
    options = {"sql_dump": "aurp.sql", "documents": ["corpus/**/*.md"], "conversations": 40}
    context = ComponentContext(project_dir=AURP, cache_dir=tmp_path / ".cache")
    turns = list(GrammarChainsSource(GrammarChainsSource.Options.model_validate(options), context=context).samples())
    previous = {}
    seen = {"template": 0, "listing": 0}
    for turn in turns:
        if turn.hops:
            assert turn.hop_count == len(turn.hops) == 2
            assert [h.index for h in turn.hops] == [1, 2] and all(h.reference_context_ids for h in turn.hops)
            if turn.metadata["chain"]["sql"].count("SELECT") == 1:  # a join template asked of one entity
                gold = {d for h in turn.hops for d in h.reference_context_ids}
                assert gold == set(turn.reference_context_ids)
                seen["template"] += 1
            else:  # "And their managers?": the listed rows with a link, then the rows they link to
                assert turn.turn_kind == "join"
                assert turn.hops[1].reference_context_ids == turn.reference_context_ids
                assert set(turn.hops[0].reference_context_ids) <= set(previous[turn.conversation_id])
                seen["listing"] += 1
        elif turn.turn_kind != "unanswerable":
            assert turn.hop_count == 1
        if turn.turn_kind != "unanswerable":  # an empty filter leaves the list as it was
            previous[turn.conversation_id] = turn.reference_context_ids
    assert seen["template"] > 0 and seen["listing"] > 0


def test_hops_are_the_same_in_another_process(tmp_path):
    code = (
        "import json, sys; from pathlib import Path; from ragassay.components import ComponentContext; "
        "from ragassay.plugins.grammar.source import GrammarSource; "
        f"ctx = ComponentContext(project_dir=Path({str(HOPS_DB)!r}), cache_dir=Path({str(tmp_path)!r})); "
        "src = GrammarSource(GrammarSource.Options.model_validate({'sql_dump': 'hops.sql'}), context=ctx); "
        "print(json.dumps([[s.question_id, s.hop_count, [h.model_dump() for h in s.hops]] for s in src.samples()]))"
    )
    other = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    here, _ = grammar(HOPS_DB, tmp_path, sql_dump="hops.sql")
    assert other == [[s.question_id, s.hop_count, [h.model_dump() for h in s.hops]] for s in here]
