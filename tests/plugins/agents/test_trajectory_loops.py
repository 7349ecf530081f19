"""``loop_free`` on hand-computed trajectories: consecutive and cyclic repeats, the limit, the steps named."""

from __future__ import annotations

import pytest

from ragassay import RAGOutput, Sample, Step, testing
from ragassay.plugins.agents.trajectory_loops import LoopFree, find_loops

SAMPLE = Sample(question_id="q", question="?")


def trajectory(*actions: str) -> RAGOutput:
    """One step per letter: a tool call of tool <letter> (lower case) or a retrieval of query <letter> (upper case),
    with a model call between any two actions (model calls are not actions)."""
    steps = []
    for letter in actions:
        steps.append(Step(id=f"m{len(steps)}", kind="model_call", output=f"thinking {len(steps)}"))
        if letter.islower():
            steps.append(Step(id=f"s{len(steps)}", kind="tool_call", name=letter, arguments={"arg": 1}))
        else:
            steps.append(Step(id=f"s{len(steps)}", kind="retrieval", query=f"  Query {letter} "))
    return RAGOutput(answer="x", trajectory=[*steps, Step(id="end", kind="answer", output="x")])


@pytest.mark.parametrize(
    "actions, limit, value",
    [
        ("abc", 2, 1.0),
        ("aab", 2, 1.0),  # one retry allowed by the default limit
        ("aaab", 2, 0.0),
        ("aab", 1, 0.0),
        ("abab", 2, 1.0),
        ("ababab", 2, 0.0),  # a cycle of period 2, three times
        ("abcabcabc", 2, 0.0),
        ("AAA", 2, 0.0),  # the same retrieval query three times
        ("AaAaAa", 2, 0.0),
        ("abcdabcdabcd", 2, 1.0),  # period 4 is beyond max_cycle 3
        ("", 2, 1.0),
    ],
)
def test_hand_computed_table(actions, limit, value):
    assert testing.component("metric", LoopFree, limit=limit).score(SAMPLE, trajectory(*actions)).value == value


def test_details_name_the_repeated_steps():
    result = testing.component("metric", LoopFree).score(SAMPLE, trajectory(*"xababab"))
    assert result.details["loops"] == [
        {
            "period": 2,
            "repeats": 3,
            "actions": ['tool a {"arg": 1}', 'tool b {"arg": 1}'],
            "steps": ["s3", "s5", "s7", "s9", "s11", "s13"],
            "step_indices": [3, 5, 7, 9, 11, 13],
        }
    ]
    assert result.details["actions"] == 7 and result.details["limit"] == 2


def test_queries_are_compared_normalised_and_arguments_exactly():
    steps = [
        Step(id="1", kind="retrieval", query="Nile length"),
        Step(id="2", kind="retrieval", query="nile   LENGTH"),
        Step(id="3", kind="retrieval", query=" nile length "),
    ]
    assert testing.component("metric", LoopFree).score(SAMPLE, RAGOutput(answer="", trajectory=steps)).value == 0.0
    calls = [Step(id=str(i), kind="tool_call", name="t", arguments={"n": i}) for i in range(3)]
    assert testing.component("metric", LoopFree).score(SAMPLE, RAGOutput(answer="", trajectory=calls)).value == 1.0


def test_find_loops_reports_the_shortest_period_once():
    assert find_loops(list("aaaaaa"), 2, 3) == [(0, 1, 6)]
    assert find_loops(list("abababxyyy"), 2, 3) == [(0, 2, 3), (7, 1, 3)]


def test_unscored_without_trajectory():
    assert "no trajectory" in testing.component("metric", LoopFree).score(SAMPLE, RAGOutput(answer="x")).reason
