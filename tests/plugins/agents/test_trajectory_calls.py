"""``tool_correctness`` and ``argument_correctness`` on a hand-computed table, and the pairing they stand on."""

from __future__ import annotations

import pytest

from ragassay import RAGOutput, Sample, Step, testing
from ragassay.plugins.agents.trajectory import ArgumentCorrectness, ToolCorrectness
from ragassay.plugins.agents.trajectory_calls import pairing


def calls(*made: tuple[str, dict]) -> RAGOutput:
    steps = [Step(id="m1", kind="model_call", name="gpt")]
    steps += [Step(id=f"t{i}", kind="tool_call", name=n, arguments=a) for i, (n, a) in enumerate(made, start=1)]
    return RAGOutput(answer="ok", trajectory=[*steps, Step(id="ans", kind="answer", output="ok")])


def expecting(*expected: tuple[str, dict]) -> Sample:
    return Sample(question_id="q", question="?", expected_tool_calls=[{"name": n, "arguments": a} for n, a in expected])


A1, A2, B1, C1 = ("a", {"x": 1}), ("a", {"x": 2}), ("b", {"y": 1}), ("c", {})

# (made calls, expected calls, tool_correctness, tool_correctness ordered, argument_correctness exact) by hand
TABLE = [
    ([A1, B1], [A1, B1], 1.0, 1.0, 1.0),
    ([B1, A1], [A1, B1], 1.0, 0.5, 1.0),  # ordered: LCS of (b, a) and (a, b) is 1
    ([A1], [A1, B1], 0.5, 0.5, 1.0),
    ([A2, B1, C1], [A1, B1], 1.0, 1.0, 0.5),  # a called with x=2: named right, argued wrong
    ([A2, A1], [A1], 1.0, 1.0, 1.0),  # the right call among two of the same tool is the one paired
    ([C1], [A1, B1], 0.0, 0.0, None),  # no expected tool called: arguments unscored
    ([], [A1], 0.0, 0.0, None),
    ([A1, A1, A1], [A1, A1], 1.0, 1.0, 1.0),
    ([A1], [A1, A1], 0.5, 0.5, 1.0),
    ([B1, C1, A1, B1], [A1, B1, C1], 1.0, 2 / 3, 1.0),  # LCS (b, c) or (a, b): 2
]


@pytest.mark.parametrize("made, expected, plain, ordered, arguments", TABLE)
def test_hand_computed_table(made, expected, plain, ordered, arguments):
    sample, output = expecting(*expected), calls(*made)
    assert testing.component("metric", ToolCorrectness).score(sample, output).value == pytest.approx(plain)
    assert testing.component("metric", ToolCorrectness, ordered=True).score(sample, output).value == pytest.approx(
        ordered
    )
    result = testing.component("metric", ArgumentCorrectness).score(sample, output)
    if arguments is None:
        assert "no expected tool was called" in result.reason
    else:
        assert result.value == pytest.approx(arguments)


def test_argument_modes_subset_and_superset_of_keys():
    sample = expecting(("search", {"q": "nile", "k": 5}))
    fewer, more = calls(("search", {"q": "nile"})), calls(("search", {"q": "nile", "k": 5, "lang": "en"}))
    value = lambda output, **o: testing.component("metric", ArgumentCorrectness, **o).score(sample, output).value  # noqa: E731
    assert (value(fewer), value(fewer, args_mode="subset"), value(fewer, args_mode="superset")) == (0.0, 1.0, 0.0)
    assert (value(more), value(more, args_mode="subset"), value(more, args_mode="superset")) == (0.0, 0.0, 1.0)
    assert value(fewer, args_overrides={"search": ["q"]}) == 1.0


def test_details_of_argument_correctness():
    result = testing.component("metric", ArgumentCorrectness).score(expecting(A1, B1), calls(A2, B1, C1))
    assert result.details["calls"] == [
        {"index": 0, "name": "a", "expected_arguments": {"x": 1}, "step": "t1", "step_index": 1,
         "arguments": {"x": 2}, "match": False},
        {"index": 1, "name": "b", "expected_arguments": {"y": 1}, "step": "t2", "step_index": 2,
         "arguments": {"y": 1}, "match": True},
    ]  # fmt: skip


def test_details_of_tool_correctness_list_extra_calls():
    result = testing.component("metric", ToolCorrectness).score(expecting(A1), calls(B1, A1))
    assert [row["step"] for row in result.details["expected"]] == ["t2"]
    assert result.details["extra_calls"] == [{"step": "t1", "step_index": 1, "name": "b", "arguments": {"y": 1}}]


def test_retrievals_count_as_calls_when_asked():
    output = RAGOutput(
        answer="ok",
        trajectory=[
            Step(id="r1", kind="retrieval", name="search", query="nile length"),
            Step(id="ans", kind="answer", output="ok"),
        ],
    )
    sample = expecting(("search", {"query": "nile length"}))
    assert testing.component("metric", ToolCorrectness).score(sample, output).value == 0.0
    assert testing.component("metric", ToolCorrectness, count_retrievals=True).score(sample, output).value == 1.0
    on = testing.component("metric", ArgumentCorrectness, count_retrievals=True).score(sample, output)
    assert on.value == 1.0


def test_nested_agents_calls_count_in_trajectory_order():
    output = RAGOutput(
        answer="ok",
        trajectory=[
            Step(id="ag", kind="agent", name="researcher"),
            Step(id="t1", kind="tool_call", parent_id="ag", name="a", arguments={"x": 1}),
            Step(id="t2", kind="tool_call", name="b", arguments={"y": 1}),
        ],
    )
    assert testing.component("metric", ToolCorrectness, ordered=True).score(expecting(A1, B1), output).value == 1.0


def test_pairing_is_maximum_and_deterministic():
    fits = {(0, 0), (0, 1), (1, 0)}
    assert pairing([0, 1], [0, 1], lambda e, m: (e, m) in fits) == {0: 1, 1: 0}
    assert pairing([0, 1], [0, 1], lambda e, m: True) == {0: 0, 1: 1}
    assert pairing([], [0], lambda e, m: True) == {}
