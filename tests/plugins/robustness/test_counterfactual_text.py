"""The counterfactual's text on Aurp (issue 38, items 21 and 23): a name is replaced by a new name, never by
another row's (two employees would share it); an article before a replaced value fits the new one; an answer that
gives both the new and the original value does not follow the counterfactual."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from test_operators_on_grammar import aurp, build, gold_chunks  # noqa: F401 - the Aurp fixture and its helpers

from ragassay import RAGOutput, Sample
from ragassay.plugins.robustness.base import Case
from ragassay.plugins.robustness.metrics import CounterfactualFollowing
from ragassay.plugins.robustness.seeding import sample_rng

AURP = Path(__file__).parents[3] / "examples" / "aurp" / "aurp.sql"


def test_no_counterfactual_gives_a_row_another_rows_name(aurp):  # noqa: F811
    root, samples, docs = aurp
    op = build("counterfactual", root, database="aurp.sql")
    conn = sqlite3.connect(":memory:")
    conn.executescript(AURP.read_text(encoding="utf-8"))
    names = 0
    for sample in samples:
        d = op.apply(Case(sample, gold_chunks(sample, docs), sample_rng(0, sample.question_id, op.name))).details
        if d.get("column") != "Name":
            continue
        names += 1
        others = {v for (v,) in conn.execute(f"SELECT Name FROM {d['table']}")}
        assert d["new_value"] not in others, (sample.question_id, d)
    assert names > 50


@pytest.mark.parametrize(
    "text, old, new, expected",
    [
        ("She is an Architectural Liaison.", "Architectural Liaison", "Project Manager", "She is a Project Manager."),
        ("A Graduate Engineer joined.", "Graduate Engineer", "Urban Planner", "An Urban Planner joined."),
        (
            "Hired as a BIM Manager, a BIM Manager",
            "BIM Manager",
            "IT Administrator",
            "Hired as an IT Administrator, an IT Administrator",
        ),
        ("The Data Engineer", "Data Engineer", "Office Administrator", "The Office Administrator"),
        ("Banana Data Engineer", "Data Engineer", "Office Administrator", "Banana Office Administrator"),
    ],
)
def test_an_article_before_the_replaced_value_fits_the_new_one(text, old, new, expected):
    from ragassay.plugins.robustness.counterfactual import rewrite

    assert rewrite(text, old, new) == expected


def test_the_aurp_counterfactuals_leave_no_article_that_does_not_fit(aurp):  # noqa: F811
    root, samples, docs = aurp
    op = build("counterfactual", root, database="aurp.sql")
    checked = 0
    for sample in samples:
        out = op.apply(Case(sample, gold_chunks(sample, docs), sample_rng(0, sample.question_id, op.name)))
        new = out.details.get("new_text")
        for chunk in out.chunks if out.changed else ():
            if chunk.id in out.details["rewritten"]:
                wrong = "a" if new[:1].lower() in "aeiou" else "an"
                for article in (wrong, wrong.capitalize()):
                    assert f" {article} {new}" not in f" {chunk.text}", (sample.question_id, new)
                checked += 1
    assert checked > 100


def _score(answer: str, expected: str, original: str):
    output = RAGOutput(
        answer=answer,
        contexts=[],
        trace={
            "perturbation": {
                "operator": "counterfactual",
                "changed": True,
                "expected_answer": expected,
                "original_answer": original,
            }
        },
    )
    return CounterfactualFollowing().score(Sample(question_id="q", question="Who?"), output)


def test_an_answer_with_both_values_does_not_follow_the_counterfactual():
    both = _score("It is Orsk, formerly Velm.", "Orsk", "Velm")
    assert both.value == 0.0 and both.details["says_original"] is True and both.details["gives_new"] is True
    new = _score("It is Orsk.", "Orsk", "Velm")
    assert new.value == 1.0 and new.details["says_original"] is False
    within = _score("She is a Senior Engineer.", "Senior Engineer", "Engineer")  # the original inside the new one
    assert within.value == 1.0 and within.details["says_original"] is False
    also = _score("A Senior Engineer, not an Engineer.", "Senior Engineer", "Engineer")
    assert also.value == 0.0 and also.details["says_original"] is True
