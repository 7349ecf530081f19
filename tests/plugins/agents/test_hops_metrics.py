"""hop_recall, hop_precision, hop_mrr and hop_coverage equal a hand-computed table on the hops test database (2- and
3-hop joins) with hand-built trajectories: all hops found, the second hop missed, fewer retrievals than hops, a
hop of two rows, a non-agent output; details as docs/metrics.md says; unscored cases; determinism."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ragassay import Hop, RAGOutput, Sample, Unscored, testing
from ragassay.components import ComponentContext

from hops_db import agent_output, answer, doc, model, plain_output, retrieval, samples, tool

NAMES = ("hop_recall", "hop_precision", "hop_mrr", "hop_coverage")
CITY = ("employee_city", "Ana Silva")  # 3 hops: employee-100, department-10, site-1
DEPT = ("employee_department", "Ben Okoro")  # 2 hops: employee-101, department-11
STAFF = ("department_staff", "Build")  # 2 hops: department-11, then employee-101 and employee-102


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return samples(tmp_path_factory.mktemp("hops"))


@functools.cache
def metric(name: str, k: object = None):
    """The registered metric, built once per options."""
    context = ComponentContext(
        project_dir=Path.cwd(), cache_dir=Path.cwd() / ".unused", registry=testing.registry_with()
    )
    return testing.component("metric", name, context=context, k=k)


def agent(*steps):
    return agent_output(list(steps))


#: case -> (sample, output, hop_recall, hop_precision, hop_mrr, hop_coverage, first_failed_hop, best steps), by hand.
CASES = {
    # hop 1 in r1 at rank 1 of 2; hop 2 in r2 at rank 1 of 2; hop 3 in r3 at rank 2 of 2
    "all hops found": (
        CITY,
        agent(
            model("m1"),
            retrieval("r1", "employee-100", "department-12"),
            model("m2"),
            retrieval("r2", "department-10", "site-2"),
            retrieval("r3", "employee-103", "site-1"),
            answer("a", "It is in Sydney."),
        ),
        1.0,
        0.5,
        (1 + 1 + 0.5) / 3,
        1.0,
        None,
        ["r1", "r2", "r3"],
    ),
    # department-10 is never retrieved; site-1 is found by r2 at rank 2 of 2
    "second hop missed": (
        CITY,
        agent(
            model("m1"),
            retrieval("r1", "employee-100"),
            model("m2"),
            retrieval("r2", "department-12", "site-1"),
            answer("a", "Sydney"),
        ),
        2 / 3,
        (1 + 0 + 0.5) / 3,
        (1 + 0 + 0.5) / 3,
        2 / 3,
        2,
        ["r1", None, "r2"],
    ),
    # one retrieval for three hops: hop 1 at rank 1, hop 2 at rank 2, hop 3 missing
    "fewer retrievals than hops": (
        CITY,
        agent(retrieval("r1", "employee-100", "department-10"), answer("a", "Sydney")),
        2 / 3,
        (0.5 + 0.5 + 0) / 3,
        (1 + 0.5 + 0) / 3,
        2 / 3,
        3,
        ["r1", "r1", None],
    ),
    # a failed tool call between the retrievals; hop 1 is best in r1 (rr 1) rather than r2 (rr 1/2)
    "tool error": (
        DEPT,
        agent(
            retrieval("r1", "employee-101"),
            tool("t1", error="timeout"),
            retrieval("r2", "department-11", "employee-101"),
            answer("a", "Build"),
        ),
        1.0,
        (1 + 0.5) / 2,
        1.0,
        1.0,
        None,
        ["r1", "r2"],
    ),
    # no answer step: the retrieval is what it is
    "no answer": (
        DEPT,
        agent(retrieval("r1", "department-11", "employee-101"), model("m1")),
        1.0,
        0.5,
        (0.5 + 1) / 2,
        1.0,
        None,
        ["r1", "r1"],
    ),
    # hop 2 touches two Employee rows; r2 finds one of them at rank 1 of 2
    "hop of two rows": (
        STAFF,
        agent(retrieval("r1", "department-11"), retrieval("r2", "employee-102", "site-2"), answer("a", "2 people")),
        (1 + 0.5) / 2,
        (1 + 0.5) / 2,
        1.0,
        1.0,
        None,
        ["r1", "r2"],
    ),
    # a non-agent output: its contexts are one retrieval step, without an id
    "non-agent output": (
        DEPT,
        plain_output("Build", "employee-101", "site-1", "department-11"),
        1.0,
        1 / 3,
        (1 + 1 / 3) / 2,
        1.0,
        None,
        [None, None],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_per_hop_metrics_equal_the_hand_computed_table(db, case):
    key, output, recall, precision, mrr, coverage, first_failed, best = CASES[case]
    values = {name: metric(name).score(db[key], output) for name in NAMES}
    expected = {"hop_recall": recall, "hop_precision": precision, "hop_mrr": mrr, "hop_coverage": coverage}
    for name in NAMES:
        assert values[name].value == pytest.approx(expected[name]), (case, name)
        assert values[name].details["first_failed_hop"] == first_failed
        assert [h["step"] for h in values[name].details["hops"]] == best
    assert len({repr(v.details) for v in values.values()}) == 1  # the four share their details


def test_details_are_the_documented_breakdown(db):
    _, output, *_ = CASES["second hop missed"]
    result = metric("hop_recall").score(db[CITY], output)
    assert result.details == {
        "hops": [
            {
                "index": 1,
                "description": "Employee",
                "gold": [doc("employee-100")],
                "found": True,
                "recall": 1.0,
                "precision": 1.0,
                "rr": 1.0,
                "step": "r1",
            },
            {
                "index": 2,
                "description": "Employee -> Department",
                "gold": [doc("department-10")],
                "found": False,
                "recall": 0.0,
                "precision": 0.0,
                "rr": 0.0,
                "step": None,
            },
            {
                "index": 3,
                "description": "Department -> Site",
                "gold": [doc("site-1")],
                "found": True,
                "recall": 1.0,
                "precision": 0.5,
                "rr": 0.5,
                "step": "r2",
            },
        ],
        "first_failed_hop": 2,
    }


def test_the_cut_off_reads_the_first_k_of_each_step(db):
    _, output, *_ = CASES["non-agent output"]  # department-11 is at rank 3
    recall = metric("hop_recall", k=1).score(db[DEPT], output)
    assert recall.value == pytest.approx(0.5) and recall.details["first_failed_hop"] == 2
    assert metric("hop_coverage", k=2).score(db[DEPT], output).value == pytest.approx(0.5)
    assert metric("hop_coverage", k="all").score(db[DEPT], output).value == pytest.approx(1.0)


def test_gold_named_by_context_ids_alone_matches(db):
    """A retrieval step without document ids is matched by its context ids (gold may name chunks or documents)."""
    step = retrieval("r1", "employee-101", "department-11").model_copy(
        update={"context_ids": [doc("employee-101"), doc("department-11")], "document_ids": []}
    )
    assert metric("hop_recall").score(db[DEPT], agent(step, answer("a", "Build"))).value == 1.0


def test_a_trajectory_without_retrieval_finds_no_hop(db):
    result = metric("hop_coverage").score(db[DEPT], agent(model("m1"), answer("a", "Build")))
    assert result.value == 0.0 and result.details["first_failed_hop"] == 1


def test_unscored_with_the_reason(db):
    single = db[("employee_title", "Ana Silva")]
    _, output, *_ = CASES["all hops found"]
    for name in NAMES:
        built = metric(name)
        result = built.score(single, output)
        assert isinstance(result, Unscored) and "Sample.hops" in result.reason
        no_gold = Sample(
            question_id="q",
            question="?",
            hops=[Hop(index=1, description="A", reference_context_ids=["x"]), Hop(index=2, description="A -> B")],
        )
        result = built.score(no_gold, output)
        assert isinstance(result, Unscored) and "hop 2 (A -> B) has no gold ids" in result.reason
        skipped = RAGOutput(answer="Build", retrieved=False)
        result = built.score(db[DEPT], skipped)
        assert isinstance(result, Unscored) and "retrieved=False" in result.reason
        assert (built.direction, built.value_range, built.requires) == ("higher", (0.0, 1.0), {"hops"})


def test_the_same_inputs_give_the_same_values(db):
    for case in CASES.values():
        key, output = case[0], case[1]
        for name in NAMES:
            first = metric(name).score(db[key], output)
            again = metric(name).score(db[key].model_copy(deep=True), output.model_copy(deep=True))
            assert first == again
