"""step_blame equals a hand-decided table on the hops test database: all hops found, the second hop missed (blamed at
the second retrieval), fewer retrievals than hops (blamed at the last one), a tool error, an error at the retrieval
that missed its hop, no answer, an empty answer, an unsupported answer, non-agent outputs; unscored cases."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ragassay import Unscored, testing
from ragassay.components import ComponentContext

from hops_db import agent_output, answer, model, plain_output, retrieval, samples, tool

CITY = ("employee_city", "Ana Silva")  # 3 hops: employee-100, department-10, site-1; answer Sydney
DEPT = ("employee_department", "Ben Okoro")  # 2 hops: employee-101, department-11; answer Build
STAFF = ("department_staff", "Build")  # 2 hops: department-11, then employee-101 and employee-102; answer 2


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return samples(tmp_path_factory.mktemp("blame"))


@functools.cache
def step_blame():
    context = ComponentContext(
        project_dir=Path.cwd(), cache_dir=Path.cwd() / ".unused", registry=testing.registry_with()
    )
    return testing.component("metric", "step_blame", context=context)


def agent(*steps):
    return agent_output(list(steps))


#: case -> (sample, output, blame, step, step_index, kind, hop, words of the reason), decided by hand.
CASES = {
    "all hops found": (
        CITY,
        agent(
            model("m1"),
            retrieval("r1", "employee-100"),
            model("m2"),
            retrieval("r2", "department-10"),
            retrieval("r3", "site-1"),
            answer("a", "It is in Sydney."),
        ),
        "ok",
        None,
        None,
        None,
        None,
        "contains the reference answer",
    ),
    "second hop missed": (
        CITY,
        agent(
            model("m1"),
            retrieval("r1", "employee-100"),
            model("m2"),
            retrieval("r2", "department-12", "site-1"),
            answer("a", "Sydney"),
        ),
        "missed_hop",
        "r2",
        3,
        "retrieval",
        2,
        "retrieval step 2 (for hop 2 (Employee -> Department))",
    ),
    "second hop missed, a later tool error": (
        CITY,
        agent(
            retrieval("r1", "employee-100"),
            retrieval("r2", "site-1"),
            tool("t1", error="timeout"),
            answer("a", "Sydney"),
        ),
        "missed_hop",
        "r2",
        1,
        "retrieval",
        2,
        "missed the hop's gold",
    ),
    "fewer retrievals than hops": (
        CITY,
        agent(retrieval("r1", "employee-100", "department-10"), model("m1"), answer("a", "Sydney")),
        "missed_hop",
        "r1",
        0,
        "retrieval",
        3,
        "1 retrieval step(s) for 3 hops, so the last retrieval is blamed",
    ),
    "no retrieval at all": (
        DEPT,
        agent(model("m1"), answer("a", "Build")),
        "missed_hop",
        None,
        None,
        None,
        1,
        "no retrieval step",
    ),
    "tool error": (
        DEPT,
        agent(
            retrieval("r1", "employee-101"),
            tool("t1", error="timeout"),
            retrieval("r2", "department-11"),
            answer("a", "Build"),
        ),
        "tool_error",
        "t1",
        1,
        "tool_call",
        None,
        "tool 'sql' ended with an error: timeout",
    ),
    "the retrieval that missed its hop failed": (  # the error is the cause: blamed at the same step
        DEPT,
        agent(retrieval("r1", "employee-101"), retrieval("r2", error="index offline"), answer("a", "Build")),
        "tool_error",
        "r2",
        1,
        "retrieval",
        None,
        "index offline",
    ),
    "no answer step": (
        DEPT,
        agent(retrieval("r1", "employee-101", "department-11"), model("m1")),
        "no_answer",
        None,
        None,
        None,
        None,
        "no answer step",
    ),
    "empty answer": (
        DEPT,
        agent(retrieval("r1", "employee-101", "department-11"), answer("a", "  ")),
        "no_answer",
        "a",
        1,
        "answer",
        None,
        "the answer is empty",
    ),
    "unsupported answer": (
        DEPT,
        agent(retrieval("r1", "employee-101"), retrieval("r2", "department-11"), answer("a", "Design")),
        "unsupported_answer",
        "a",
        2,
        "answer",
        None,
        "lacks the reference answer 'Build'",
    ),
    "a hop of two rows, one found": (
        STAFF,
        agent(retrieval("r1", "department-11"), retrieval("r2", "employee-102"), answer("a", "There are 2.")),
        "ok",
        None,
        None,
        None,
        None,
        "every hop's gold was retrieved",
    ),
    "non-agent output, all found": (
        DEPT,
        plain_output("Build", "employee-101", "department-11"),
        "ok",
        None,
        None,
        None,
        None,
        "contains the reference answer",
    ),
    "non-agent output, second hop missed": (
        DEPT,
        plain_output("Build", "employee-101"),
        "missed_hop",
        None,
        None,
        "retrieval",
        2,
        "the retrieved contexts lack every gold document of hop 2",
    ),
    "non-agent output, unsupported": (
        DEPT,
        plain_output("Audit", "employee-101", "department-11"),
        "unsupported_answer",
        None,
        None,
        "answer",
        None,
        "lacks the reference answer 'Build'",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_step_blame_equals_the_hand_decided_table(db, case):
    key, output, blame, step, step_index, kind, hop, words = CASES[case]
    result = step_blame().score(db[key], output)
    assert result.value == (1.0 if blame == "ok" else 0.0)
    details = result.details
    assert set(details) == {"blame", "step", "step_index", "kind", "hop", "reason"}
    assert (details["blame"], details["step"], details["step_index"], details["kind"], details["hop"]) == (
        blame,
        step,
        step_index,
        kind,
        hop,
    ), case
    assert words in details["reason"], details["reason"]
    if step_index is not None:
        assert output.trajectory[step_index].id == step


def test_a_chain_turn_needs_every_row_of_its_answer(db):
    sample = db[DEPT].model_copy(update={"metadata": {"chain": {"rows": ["Build", "Audit"]}}})
    output = agent(retrieval("r1", "employee-101", "department-11"), answer("a", "Build"))
    details = step_blame().score(sample, output).details
    assert details["blame"] == "unsupported_answer" and "'Audit'" in details["reason"]
    both = agent(retrieval("r1", "employee-101", "department-11"), answer("a", "Build and Audit"))
    assert step_blame().score(sample, both).details["blame"] == "ok"


def test_unscored_with_the_reason(db):
    _, output, *_ = CASES["all hops found"]
    result = step_blame().score(db[("employee_title", "Ana Silva")], output)
    assert isinstance(result, Unscored) and "Sample.hops" in result.reason
    result = step_blame().score(db[CITY].model_copy(update={"reference_answers": []}), output)
    assert isinstance(result, Unscored) and "reference_answers" in result.reason
    metric = step_blame()
    assert (metric.direction, metric.value_range) == ("higher", (0.0, 1.0))
    assert metric.requires == {"hops", "reference_answers", "answer"}


def test_the_same_inputs_give_the_same_blame(db):
    for key, output, *_ in CASES.values():
        first = step_blame().score(db[key], output)
        assert first == step_blame().score(db[key].model_copy(deep=True), output.model_copy(deep=True))
