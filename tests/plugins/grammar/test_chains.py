"""GRAMMAR follow-up chains on examples/aurp: turn counts, every answer equal to its executed SQL, history
dependence, unanswerable turns, gold documents, and generation identical across processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from ragassay.components import ComponentContext
from ragassay.models import turn_id
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.grammar.chains import NO_ANSWER, GrammarChainsSource
from ragassay.plugins.grammar.source import GrammarSource

AURP = Path(__file__).resolve().parents[3] / "examples" / "aurp"
CHAIN_KEYS = {"sql", "kind", "standalone_question", "refers_to", "depends_on_history", "earlier"}


def chains(tmp_path: Path, **options) -> list:
    """The samples of a grammar_chains source over examples/aurp."""
    options = {"sql_dump": "aurp.sql", "documents": ["corpus/**/*.md"], "conversations": 40, **options}
    context = ComponentContext(project_dir=AURP, cache_dir=tmp_path / ".cache-chains")
    return list(GrammarChainsSource(GrammarChainsSource.Options.model_validate(options), context=context).samples())


@pytest.fixture(scope="module")
def turns(tmp_path_factory):
    return chains(tmp_path_factory.mktemp("chains"))


@pytest.fixture(scope="module")
def aurp_db():
    connection = sqlite3.connect(":memory:")
    connection.executescript((AURP / "aurp.sql").read_text(encoding="utf-8"))
    yield connection
    connection.close()


def by_conversation(samples) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for sample in samples:
        grouped.setdefault(sample.conversation_id, []).append(sample)
    return grouped


def test_conversations_have_3_to_5_turns_numbered_in_order_with_their_history(turns):
    grouped = by_conversation(turns)
    assert len(grouped) == 40
    assert {len(c) for c in grouped.values()} <= {3, 4, 5} and len({len(c) for c in grouped.values()}) > 1
    for cid, conversation in grouped.items():
        for number, sample in enumerate(conversation, start=1):
            assert sample.turn == number and sample.question_id == turn_id(cid, number)
            earlier = conversation[: number - 1]
            assert [t.text for t in sample.history if t.speaker == "user"] == [s.question for s in earlier]
            assert [t.text for t in sample.history if t.speaker == "agent"] == [
                (s.reference_answers or [NO_ANSWER])[0] for s in earlier
            ]
            assert [t.speaker for t in sample.history] == ["user", "agent"] * (number - 1)
            chain = sample.metadata["chain"]
            assert CHAIN_KEYS <= set(chain)
            assert chain["earlier"] == [
                {
                    "question": s.question,
                    "standalone_question": s.metadata["chain"]["standalone_question"],
                    "refers_to": s.metadata["chain"]["refers_to"],
                }
                for s in earlier
            ]


def _rows(connection, sql: str) -> list[str]:
    return ["; ".join(", ".join(str(v) for v in row) for row in connection.execute(sql).fetchall())]


def test_every_turn_answer_is_the_result_of_executing_its_stored_sql(turns, aurp_db):
    checked = Counter()
    for sample in turns:
        chain = sample.metadata["chain"]
        if chain.get("missing_column"):
            with pytest.raises(sqlite3.OperationalError, match="no such column"):
                aurp_db.execute(chain["sql"])
            assert sample.reference_answers == [] and sample.answerability == "unanswerable"
            checked["missing column"] += 1
            continue
        result = aurp_db.execute(chain["sql"]).fetchall()
        rendered = "; ".join(", ".join(str(v) for v in row) for row in result)
        if result:
            assert sample.reference_answers == [rendered], sample.question_id
            assert sample.answerability == "answerable" and sample.is_answerable
            checked["answered"] += 1
        else:
            assert sample.reference_answers == [] and sample.answerability == "unanswerable"
            assert not sample.is_answerable and chain["kind"] == "unanswerable"
            checked["empty"] += 1
    assert checked["answered"] > 100 and checked["empty"] > 0 and checked["missing column"] > 0


def test_at_least_a_tenth_of_turns_depend_on_history_and_their_standalone_form_resolves_them(turns):
    dependent = [s for s in turns if s.metadata["chain"]["depends_on_history"]]
    assert len(dependent) >= 0.1 * len(turns)
    for sample in dependent:
        chain = sample.metadata["chain"]
        assert sample.turn > 1 and chain["refers_to"]
        assert chain["refers_to"].lower() not in sample.question.lower()
        assert chain["refers_to"].lower() in chain["standalone_question"].lower()
        said = " ".join([t.text for t in sample.history] + [e["standalone_question"] for e in chain["earlier"]])
        assert chain["refers_to"] in said  # what the reference stands for was said (or meant) earlier
    for sample in turns:
        if sample.turn == 1:
            assert sample.metadata["chain"]["kind"] == "start" and not sample.history
            assert sample.question == sample.metadata["chain"]["standalone_question"]


def test_every_kind_of_turn_is_generated_and_unanswerable_turns_are_labelled(turns):
    kinds = Counter(s.metadata["chain"]["kind"] for s in turns)
    assert set(kinds) == {"start", "filter", "join", "entity", "unanswerable"}
    for sample in turns:
        unanswerable = sample.metadata["chain"]["kind"] == "unanswerable"
        assert (sample.answerability == "unanswerable") == unanswerable
        assert sample.turn_kind == sample.metadata["chain"]["kind"]


def test_gold_documents_are_those_of_the_rows_the_answer_lists(turns, aurp_db, tmp_path):
    employees = dict(aurp_db.execute("SELECT Name, EmployeeID FROM Employee").fetchall())
    corpus = {str(p.relative_to(AURP)) for p in (AURP / "corpus").rglob("*.md")}
    grammar = GrammarSource(
        GrammarSource.Options(sql_dump="aurp.sql", documents=["corpus/**/*.md"]),
        context=ComponentContext(project_dir=AURP, cache_dir=tmp_path),
    )
    grammar_pairs = list(grammar.samples())
    pairs = {p.sql: p.reference_context_ids for p in grammar_pairs}
    pair_answers = {p.sql: p.reference_answers for p in grammar_pairs}
    listed = 0
    for sample in turns:
        assert set(sample.reference_context_ids) <= corpus
        if sample.answerability == "unanswerable":
            assert sample.reference_context_ids == []
            continue
        assert sample.reference_context_ids
        rows = sample.metadata["chain"]["rows"]
        if sample.metadata["chain"]["standalone_question"].startswith(("List ", "Which are ")):  # a list of rows
            if all(r in employees for r in rows):
                wanted = [f"corpus/employees/employee-{employees[r]}.md" for r in rows]
                assert sorted(sample.reference_context_ids) == sorted(wanted)
                listed += 1
        else:  # a template's fact: the same gold as the grammar source's pairs of that query
            assert sample.reference_context_ids == pairs[sample.metadata["chain"]["sql"]]
            assert sample.reference_answers == pair_answers[sample.metadata["chain"]["sql"]]
    assert listed > 10


def test_referring_phrases_and_missing_attributes_follow_the_options(tmp_path):
    samples = chains(
        tmp_path,
        conversations=15,
        referring={"Project": ["it"], "Client": ["it"]},
        missing_attributes={"Project": ["budget"], "*": []},
    )
    follow = [s for s in samples if s.metadata["chain"]["refers_to"] and s.turn > 1]
    assert not any("that project" in s.question or "that client" in s.question for s in samples)
    assert any(" it" in s.question for s in follow)
    missing = [s for s in samples if s.metadata["chain"].get("missing_column")]
    assert missing and {s.metadata["chain"]["missing_column"] for s in missing} == {"Budget"}
    assert all('FROM "Project"' in s.metadata["chain"]["sql"] for s in missing)
    assert {s.question for s in missing} <= {"What is its budget?", "And what is its budget?"}
    assert all(s.metadata["chain"]["standalone_question"].startswith("What is the budget of ") for s in missing)


_DUMP = """
import json, sys
from pathlib import Path
from ragassay.components import ComponentContext
from ragassay.plugins.grammar.chains import GrammarChainsSource
aurp, seed = Path(sys.argv[1]), int(sys.argv[2])
opts = GrammarChainsSource.Options.model_validate({"sql_dump": "aurp.sql", "conversations": 25, "seed": seed})
src = GrammarChainsSource(opts, context=ComponentContext(project_dir=aurp, cache_dir=Path(sys.argv[3])))
print(json.dumps([s.model_dump(mode="json") for s in src.samples()], sort_keys=True))
"""


def _generate_in_a_process(seed: int, hash_seed: str, cache: Path) -> list:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", _DUMP, str(AURP), str(seed), str(cache)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=600,
    )
    return json.loads(done.stdout)


def test_generation_is_identical_across_processes_for_a_seed(tmp_path):
    first = _generate_in_a_process(7, "1", tmp_path)
    second = _generate_in_a_process(7, "2", tmp_path)
    assert first == second and len(first) >= 75
    other = _generate_in_a_process(8, "1", tmp_path)
    assert [s["question"] for s in other] != [s["question"] for s in first]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"min_turns": 5, "max_turns": 3}, "min_turns (5) is more than max_turns (3)"),
        ({"sampling": {"mode": "stratified"}}, "does not sample pairs"),
        ({"turns": 4}, "Extra inputs are not permitted"),
    ],
)
def test_bad_options_are_refused_with_a_reason(options, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        GrammarChainsSource.Options.model_validate({"sql_dump": "aurp.sql", **options})


def test_grammar_chains_is_registered_by_the_grammar_plugin():
    host = load_plugins()
    assert host.registry.get("dataset_source", "grammar_chains").plugin == "grammar"


def test_plan_names_the_entities_and_summary_counts_the_turns_by_kind(tmp_path):
    options = GrammarChainsSource.Options(sql_dump="aurp.sql", conversations=10)
    src = GrammarChainsSource(options, context=ComponentContext(project_dir=AURP, cache_dir=tmp_path))
    plan = {row["table"]: row for row in src.plan()}
    assert set(plan) == {"Project", "Employee", "Client"}
    assert plan["Employee"]["filters"] == "JobTitle, Department, Office"
    assert plan["Employee"]["links"] == "ManagerID -> Employee"
    assert plan["Project"]["links"] == "ClientID -> Client, ManagerID -> Employee"
    samples = list(src.samples())
    summary = {row["kind"]: row["turns"] for row in src.summary()}
    assert sum(summary.values()) == len(samples) and summary["start"] == 10
