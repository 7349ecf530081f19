"""turn_blame: each blame class from hand-built outputs, on hand-built turns and on generated aurp chain turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragassay import MetricResult, RAGOutput, Sample, Turn, Unscored
from ragassay.components import ComponentContext
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.grammar.blame import TurnBlame, TurnBlameOptions
from ragassay.plugins.grammar.chains import GrammarChainsSource

AURP = Path(__file__).resolve().parents[3] / "examples" / "aurp"


def metric(**options) -> TurnBlame:
    return TurnBlame(TurnBlameOptions(**options))


def turn(question="Who managed that project?", *, refers_to="Harbourside Residences", depends=True, rows=None, **kw):
    rows = ["Mei Chen"] if rows is None else rows
    chain = {
        "sql": "SELECT ...",
        "kind": "entity" if refers_to else "start",
        "standalone_question": "Who managed Harbourside Residences?",
        "refers_to": refers_to,
        "depends_on_history": depends,
        "earlier": [],
        "rows": rows,
    }
    fields = {
        "question_id": "chain-001::2",
        "question": question,
        "conversation_id": "chain-001",
        "turn": 2,
        "history": [
            Turn(speaker="user", text="Where is Harbourside Residences?"),
            Turn(speaker="agent", text="Pyrmont"),
        ],
        "reference_answers": ["; ".join(rows)] if rows else [],
        "reference_context_ids": ["corpus/projects/project-2.md"] if rows else [],
        "answerability": "answerable" if rows else "unanswerable",
        "metadata": {"chain": chain},
    }
    return Sample(**{**fields, **kw})


def output(answer, docs=(), query=None):
    return RAGOutput(answer=answer, contexts=["x"] * len(docs), context_document_ids=list(docs), query=query)


def blame(sample, out, **options) -> MetricResult:
    result = metric(**options).score(sample, out)
    assert isinstance(result, MetricResult), result
    assert result.value == (1.0 if result.details["blame"] == "ok" else 0.0)
    assert result.details["turn"] == sample.turn and result.details["reason"]
    return result


def test_ok_when_the_answer_contains_the_exact_answer_whatever_was_retrieved():
    assert blame(turn(), output("It was managed by Mei Chen.")).details["blame"] == "ok"


def test_generation_when_every_gold_document_was_retrieved_but_the_answer_misses():
    result = blame(
        turn(), output("Jack Thornton", docs=["corpus/employees/employee-1.md", "corpus/projects/project-2.md"])
    )
    assert result.details["blame"] == "generation" and "'Mei Chen'" in result.details["reason"]


def test_context_loss_when_the_turn_needs_history_and_the_query_lacks_what_it_refers_to():
    result = blame(turn(), output("Jack Thornton", docs=["corpus/projects/project-1.md"]))
    assert result.details["blame"] == "context_loss" and "Harbourside Residences" in result.details["reason"]
    rewritten_badly = output("Jack Thornton", docs=["corpus/projects/project-1.md"], query="who managed the project")
    assert blame(turn(), rewritten_badly).details["blame"] == "context_loss"


def test_retrieval_when_the_query_carried_the_reference_or_the_turn_needs_no_history():
    rewrite = output(
        "Jack Thornton", docs=["corpus/projects/project-1.md"], query="Who managed Harbourside Residences?"
    )
    assert blame(turn(), rewrite).details["blame"] == "retrieval"
    standalone = turn("Who managed Harbourside Residences?", refers_to=None, depends=False)
    assert blame(standalone, output("Jack Thornton")).details["blame"] == "retrieval"


def test_a_list_answer_must_contain_every_row_and_documents_count_by_id_or_context_id():
    listing = turn(rows=["Amelia Rossi", "Jack Thornton"])
    assert blame(listing, output("Jack Thornton and Amelia Rossi")).details["blame"] == "ok"
    half = RAGOutput(answer="Jack Thornton", contexts=["x"], context_ids=["corpus/projects/project-2.md"])
    result = blame(listing, half)
    assert result.details["blame"] == "generation" and "'Amelia Rossi'" in result.details["reason"]


def test_unanswerable_turns_are_ok_when_declined_and_blamed_when_answered():
    empty = turn("Only those whose office is Perth?", refers_to="the employees whose department is X", rows=[])
    assert blame(empty, output("I don't know.")).details["blame"] == "ok"
    assert blame(empty, output("")).details["blame"] == "ok"
    answered = blame(empty, output("Mei Chen", docs=["corpus/projects/project-2.md"]))
    assert answered.details["blame"] == "answered_unanswerable" and "returns no row" in answered.details["reason"]
    column = turn(rows=[], metadata={"chain": {**empty.metadata["chain"], "missing_column": "Budget"}})
    assert "no column Budget" in blame(column, output("About $3m")).details["reason"]
    assert blame(column, output("Budget figures are withheld")).details["blame"] == "answered_unanswerable"
    assert blame(column, output("Budget figures are withheld"), phrases=["withheld"]).details["blame"] == "ok"
    assert blame(empty, output("There is no such record.")).details["blame"] == "ok"


def test_samples_that_are_not_chain_turns_are_unscored_with_a_reason():
    plain = Sample(question_id="q", question="Who managed Harbourside Residences?", reference_answers=["Mei Chen"])
    result = metric().score(plain, output("Mei Chen"))
    assert isinstance(result, Unscored) and "metadata['chain']" in result.reason


def test_answerable_turn_without_gold_documents_is_unscored_when_the_answer_is_wrong():
    no_gold = turn(reference_context_ids=[])
    result = metric().score(no_gold, output("Jack Thornton"))
    assert isinstance(result, Unscored) and "no gold documents" in result.reason


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    options = GrammarChainsSource.Options(sql_dump="aurp.sql", documents=["corpus/**/*.md"], conversations=30)
    context = ComponentContext(project_dir=AURP, cache_dir=tmp_path_factory.mktemp("blame"))
    return list(GrammarChainsSource(options, context=context).samples())


def test_on_generated_chains_the_last_turn_query_loses_context_where_the_standalone_query_does_not(generated):
    """A system that retrieves nothing useful: asked with the turn as it stands, a turn that depends on the
    history is context loss; asked with its standalone question (a perfect rewrite), it is a retrieval failure."""
    dependent = [s for s in generated if s.metadata["chain"]["depends_on_history"] and s.answerability == "answerable"]
    assert len(dependent) > 20
    for sample in dependent:
        wrong = output("nothing", docs=["corpus/company-profile.md"])
        assert blame(sample, wrong).details["blame"] == "context_loss"
        rewrite = output(
            "nothing", docs=["corpus/company-profile.md"], query=sample.metadata["chain"]["standalone_question"]
        )
        assert blame(sample, rewrite).details["blame"] == "retrieval"
        gold = output("nothing", docs=sample.reference_context_ids)
        assert blame(sample, gold).details["blame"] == "generation"
        right = output(" and ".join(sample.metadata["chain"]["rows"]), docs=[])
        assert blame(sample, right).details["blame"] == "ok"


def test_turn_blame_is_registered_with_its_declared_direction_and_range():
    host = load_plugins()
    assert host.registry.get("metric", "turn_blame").plugin == "grammar"
    assert TurnBlame.direction == "higher" and TurnBlame.value_range == (0.0, 1.0)
