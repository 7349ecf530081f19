"""``trajectory_match`` in its four modes against LangChain agentevals' published examples and a hand-computed
table.

The agentevals cases are copied from their documentation and tests (github.com/langchain-ai/agentevals, commit
946ad15): ``python/README.md``, sections "Strict match", "Unordered match", "Subset and superset match", "Tool
args match modes"; ``python/tests/test_trajectory.py``: ``test_trajectory_match``,
``test_trajectory_with_different_tool_message_order``, ``test_trajectory_with_different_message_count``,
``test_trajectory_subset_tool_call``, ``test_tool_args_match_mode_superset``/``_subset``. An agentevals output is
a list of chat messages; here each assistant message with tool calls becomes a ``model_call`` step followed by one
``tool_call`` step per call (parallel calls are adjacent steps), the final message an ``answer`` step, and the
reference's tool calls, flattened in order, become ``Sample.expected_tool_calls``.
"""

from __future__ import annotations

import pytest

from ragassay import RAGOutput, Sample, Step, testing
from ragassay.plugins.agents.trajectory import TrajectoryMatch

SF, LONDON, SF_LONDON = {"city": "San Francisco"}, {"city": "London"}, {"city": "SF and London"}


def agent(*messages: list[tuple[str, dict]], answer: str = "Done.") -> RAGOutput:
    """An output whose trajectory makes the tool calls of each assistant message in turn."""
    steps: list[Step] = []
    for calls in messages:
        steps.append(Step(id=f"s{len(steps) + 1}", kind="model_call", name="gpt", output=""))
        for name, arguments in calls:
            steps.append(Step(id=f"s{len(steps) + 1}", kind="tool_call", name=name, arguments=arguments))
    steps.append(Step(id=f"s{len(steps) + 1}", kind="answer", output=answer))
    return RAGOutput(answer=answer, trajectory=steps)


def expecting(*calls: tuple[str, dict]) -> Sample:
    return Sample(
        question_id="q",
        question="What is the weather?",
        expected_tool_calls=[{"name": n, "arguments": a} for n, a in calls],
    )


def match(mode: str, sample: Sample, output: RAGOutput, **options) -> float:
    metric = testing.component("metric", TrajectoryMatch, mode=mode, **options)
    return metric.score(sample, output).value


# (case, output, reference (expected calls), {mode: published score}, options)
AGENTEVALS = [
    (
        "README strict: an extra parallel call",
        agent([("get_weather", SF), ("accuweather_forecast", SF)]),
        expecting(("get_weather", SF)),
        {"strict": 0.0, "superset": 1.0, "subset": 0.0, "unordered": 0.0},
        {},
    ),
    (
        "README unordered: the same calls in another order",
        agent([("get_weather", SF)], [("get_fun_activities", SF)]),
        expecting(("get_fun_activities", SF), ("get_weather", SF)),
        {"unordered": 1.0, "strict": 0.0, "superset": 1.0, "subset": 1.0},
        {},
    ),
    (
        "README subset and superset",
        agent([("get_weather", SF_LONDON), ("accuweather_forecast", SF_LONDON)]),
        expecting(("get_weather", SF_LONDON)),
        {"superset": 1.0, "subset": 0.0, "unordered": 0.0, "strict": 0.0},
        {},
    ),
    (
        "tests: test_trajectory_match (identical)",
        agent([("get_weather", SF)]),
        expecting(("get_weather", SF)),
        {"unordered": 1.0, "superset": 1.0, "subset": 1.0, "strict": 1.0},
        {},
    ),
    (
        "tests: test_trajectory_with_different_tool_message_order (one message, two parallel calls)",
        agent([("get_weather", {"city": "SF"}), ("get_weather", LONDON)]),
        expecting(("get_weather", LONDON), ("get_weather", {"city": "SF"})),
        {"unordered": 1.0, "superset": 1.0, "subset": 1.0, "strict": 1.0},
        {"parallel_batches": True},
    ),
    (
        "tests: test_trajectory_with_different_message_count",
        agent([("get_weather", {"city": "SF"})], [("get_weather", LONDON)]),
        expecting(("get_weather", LONDON), ("get_weather", {"city": "SF"})),
        {"unordered": 1.0, "superset": 1.0, "subset": 1.0, "strict": 0.0},
        {"parallel_batches": True},
    ),
    (
        "tests: test_trajectory_subset_tool_call",
        agent([("get_weather", {"city": "SF"})]),
        expecting(("get_weather", LONDON), ("get_weather", {"city": "SF"})),
        {"unordered": 0.0, "superset": 0.0, "subset": 1.0, "strict": 0.0},
        {},
    ),
]


@pytest.mark.parametrize("case, output, sample, scores, options", AGENTEVALS, ids=[c[0] for c in AGENTEVALS])
def test_agentevals_published_examples(case, output, sample, scores, options):
    for mode, published in scores.items():
        assert match(mode, sample, output, **options) == published, (case, mode)


def test_parallel_calls_are_ordered_unless_batched():
    """agentevals compares one message's calls without order; without ``parallel_batches`` strict sees order."""
    output = agent([("get_weather", {"city": "SF"}), ("get_weather", LONDON)])
    sample = expecting(("get_weather", LONDON), ("get_weather", {"city": "SF"}))
    assert match("strict", sample, output) == 0.0
    assert match("strict", sample, output, parallel_batches=True) == 1.0


FLIGHT = {"flight_no": "LX0112"}


@pytest.mark.parametrize(
    "made, expected, scores",
    [
        # tests: test_tool_args_match_mode_superset (the call has an extra argument)
        ({"is_cool": True, **FLIGHT}, FLIGHT, {"exact": 0.0, "ignore": 1.0, "subset": 0.0, "superset": 1.0}),
        # tests: test_tool_args_match_mode_subset (the call lacks an argument)
        (FLIGHT, {**FLIGHT, "foo": "bar"}, {"exact": 0.0, "ignore": 1.0, "subset": 1.0, "superset": 0.0}),
        # tests: test_tool_args_match_mode_exact
        (FLIGHT, FLIGHT, {"exact": 1.0, "ignore": 1.0, "subset": 1.0, "superset": 1.0}),
    ],
)
def test_agentevals_args_match_modes(made, expected, scores):
    output, sample = agent([("get_flight_info", made)]), expecting(("get_flight_info", expected))
    for args_mode, published in scores.items():
        assert match("strict", sample, output, args_mode=args_mode) == published, args_mode


def test_readme_override_example_with_a_per_tool_override():
    """README "Tool args match modes": 'san francisco' vs 'San Francisco'. agentevals passes a case-insensitive
    lambda for get_weather (True); a config holds no code, so the override here is a mode or a list of keys."""
    output = agent([("get_weather", {"city": "san francisco"})])
    sample = expecting(("get_weather", SF))
    assert match("strict", sample, output) == 0.0
    assert match("strict", sample, output, args_overrides={"get_weather": "ignore"}) == 1.0
    assert match("strict", sample, output, args_overrides={"other_tool": "ignore"}) == 0.0
    assert match("strict", sample, output, args_overrides={"get_weather": ["units"]}) == 1.0  # absent on both: equal
    assert match("strict", sample, output, args_overrides={"get_weather": ["city"]}) == 0.0


def test_nested_override_keys():
    made = {"where": {"city": "Paris", "zip": "75001"}, "units": "C"}
    output, sample = agent([("weather", made)]), expecting(("weather", {"where": {"city": "Paris"}, "units": "F"}))
    assert match("strict", sample, output, args_overrides={"weather": ["where.city"]}) == 1.0
    assert match("strict", sample, output, args_overrides={"weather": ["where.city", "units"]}) == 0.0


def test_greedy_would_miss_a_pairing_that_exists():
    """subset args: call 1 fits both expected calls, call 2 only the first; a first-fit pairing gives call 1 to the
    first expected call and fails, the maximum pairing succeeds (the module docstring's stated difference)."""
    output = agent([("t", {"a": 1})], [("t", {"a": 1, "b": 2})])
    sample = expecting(("t", {"a": 1, "b": 2}), ("t", {"a": 1, "c": 3}))
    assert match("unordered", sample, output, args_mode="subset") == 1.0
    assert match("strict", sample, output, args_mode="subset") == 0.0  # call 2 does not fit expected call 2


def test_details_name_the_pairs_and_the_extra_calls():
    output = agent([("get_weather", SF), ("accuweather_forecast", SF)])
    result = testing.component("metric", TrajectoryMatch, mode="superset").score(expecting(("get_weather", SF)), output)
    assert result.details["expected"] == [
        {"index": 0, "name": "get_weather", "expected_arguments": SF, "step": "s2", "step_index": 1, "arguments": SF}
    ]
    assert result.details["extra_calls"] == [
        {"step": "s3", "step_index": 2, "name": "accuweather_forecast", "arguments": SF}
    ]


def test_unscored_without_expected_calls_or_trajectory():
    metric = testing.component("metric", TrajectoryMatch)
    no_expected = metric.score(Sample(question_id="q", question="?"), agent([("t", {})]))
    assert "no expected_tool_calls" in no_expected.reason
    no_trajectory = metric.score(expecting(("t", {})), RAGOutput(answer="x"))
    assert "no trajectory" in no_trajectory.reason
    assert metric.score(expecting(("t", {})), agent()).value == 0.0  # a trajectory without calls: a mismatch


def test_an_unknown_mode_is_refused():
    with pytest.raises(Exception, match="mode"):
        testing.component("metric", TrajectoryMatch, mode="fuzzy")
