"""``step_efficiency`` and ``token_efficiency`` on hand-computed cases."""

from __future__ import annotations

import pytest

from ragassay import Hop, RAGOutput, Sample, Step, TokenUsage, testing
from ragassay.plugins.agents.trajectory_efficiency import StepEfficiency, TokenEfficiency


def step(i: int, kind: str, **fields) -> Step:
    return Step(id=f"s{i}", kind=kind, **fields)


TRAJECTORY = [
    step(1, "model_call", usage=TokenUsage(input_tokens=100, output_tokens=20, calls=1)),
    step(2, "retrieval", query="who leads project apollo"),
    step(3, "tool_call", name="sql", arguments={"q": "select 1"}),
    step(4, "retrieval", query="client of apollo"),
    step(5, "tool_call", name="sql", arguments={"q": "select 2"}),
    step(6, "retrieval", query="client of apollo again"),
    step(7, "model_call", usage=TokenUsage(input_tokens=300, output_tokens=80, calls=1)),
    step(8, "answer", output="Acme."),
]
OUTPUT = RAGOutput(answer="Acme.", trajectory=TRAJECTORY, usage=TokenUsage(input_tokens=9999, output_tokens=1))
HOPS = [Hop(index=1, description="Project -> Lead"), Hop(index=2, description="Project -> Client")]


def sample(calls: int = 0, hops: list[Hop] | None = None) -> Sample:
    expected = [{"name": "sql", "arguments": {}}] * calls
    return Sample(question_id="q", question="?", expected_tool_calls=expected, hops=hops or [])


@pytest.mark.parametrize(
    "options, sample_, value",
    [
        ({}, sample(calls=1), 1 / 2),  # 1 expected call, 2 made
        ({}, sample(calls=2), 1.0),
        ({}, sample(calls=3), 1.0),  # fewer than expected: capped at 1 (tool_correctness sees the missing one)
        ({"count_retrievals": True}, sample(calls=2), 2 / 5),  # 2 tool calls + 3 retrievals taken
        ({"steps": "retrievals"}, sample(hops=HOPS), 2 / 3),  # 2 hops, 3 retrievals
    ],
)
def test_step_efficiency_table(options, sample_, value):
    result = testing.component("metric", StepEfficiency, **options).score(sample_, OUTPUT)
    assert result.value == pytest.approx(value)


def test_step_efficiency_details_and_unscored_cases():
    metric = testing.component("metric", StepEfficiency, steps="retrievals")
    result = metric.score(sample(hops=HOPS), OUTPUT)
    assert result.details == {
        "steps": "retrievals",
        "needed": 2,
        "taken": 3,
        "counted": [
            {"step": "s2", "step_index": 1, "kind": "retrieval", "name": ""},
            {"step": "s4", "step_index": 3, "kind": "retrieval", "name": ""},
            {"step": "s6", "step_index": 5, "kind": "retrieval", "name": ""},
        ],
    }
    assert "no hops" in metric.score(sample(calls=1), OUTPUT).reason
    idle = RAGOutput(answer="x", trajectory=[step(1, "answer", output="x")])
    assert "made no retrieval" in metric.score(sample(hops=HOPS), idle).reason
    assert "no trajectory" in metric.score(sample(hops=HOPS), RAGOutput(answer="x")).reason
    plain = testing.component("metric", StepEfficiency)
    assert "no expected_tool_calls" in plain.score(sample(), OUTPUT).reason


def test_step_efficiency_requires_follow_the_options():
    assert StepEfficiency.required(StepEfficiency.Options()) == {"expected_tool_calls", "trajectory"}
    assert StepEfficiency.required(StepEfficiency.Options(steps="retrievals")) == {"hops", "trajectory"}


@pytest.mark.parametrize(
    "options, value, tokens",
    [
        ({"budget": 250}, 250 / 500, 500),  # 120 + 380 tokens in the steps; the output's usage is not used
        ({"budget": 1000}, 1.0, 500),
        ({"budget": 50, "count": "output"}, 50 / 100, 100),
        ({"budget": 200, "count": "input"}, 200 / 400, 400),
    ],
)
def test_token_efficiency_table(options, value, tokens):
    result = testing.component("metric", TokenEfficiency, **options).score(sample(), OUTPUT)
    assert result.value == pytest.approx(value)
    assert result.details["tokens"] == tokens and result.details["source"] == "steps"


def test_token_efficiency_falls_back_to_the_output_usage_and_is_unscored_without_tokens():
    metric = testing.component("metric", TokenEfficiency, budget=100)
    steps = [step(1, "retrieval", query="x"), step(2, "answer", output="y")]
    summed = RAGOutput(answer="y", trajectory=steps, usage=TokenUsage(input_tokens=150, output_tokens=50))
    result = metric.score(sample(), summed)
    assert result.value == pytest.approx(0.5) and result.details["source"] == "output.usage"
    assert "no total token count" in metric.score(sample(), RAGOutput(answer="y", trajectory=steps)).reason


def test_token_efficiency_needs_a_budget():
    with pytest.raises(Exception, match="budget"):
        testing.component("metric", TokenEfficiency)
