"""The agents metrics scored in one :class:`ragassay.ScoringUnit`, as a run scores an output: the hop matching and
the compared tool calls are computed once per unit (and per ``k`` or ``count_retrievals``), and every value is
the one the metric gives scored alone."""

from __future__ import annotations

from ragassay import Hop, RAGOutput, Sample, ScoringUnit, Step, ToolCall
from ragassay.plugins.agents.blame import StepBlame
from ragassay.plugins.agents.hops import HopCoverage, HopPrecision, HopRecall
from ragassay.plugins.agents.trajectory import ArgumentCorrectness, ToolCorrectness, TrajectoryMatch
from ragassay.plugins.agents.trajectory_efficiency import StepEfficiency


class CountingUnit(ScoringUnit):
    """A unit that records each value it computes."""

    __slots__ = ("computed",)

    def __init__(self, sample: Sample, output: RAGOutput) -> None:
        super().__init__(sample, output)
        self.computed: list = []

    def shared(self, key, compute):
        def counted():
            self.computed.append(key)
            return compute()

        return super().shared(key, counted)


SAMPLE = Sample(
    question_id="q1",
    question="Who leads the project of Ada, and where is its client?",
    reference_answers=["Oslo"],
    hops=[
        Hop(index=1, description="Employee -> Project", reference_context_ids=["docs/p1.md"]),
        Hop(index=2, description="Project -> Client", reference_context_ids=["docs/c1.md", "docs/c2.md"]),
    ],
    expected_tool_calls=[ToolCall(name="sql", arguments={"q": "a"}), ToolCall(name="search", arguments={"query": "b"})],
)
OUTPUT = RAGOutput(
    answer="The client is in Oslo [2].",
    trajectory=[
        Step(id="s1", kind="model_call", name="m", output="plan"),
        Step(id="s2", kind="retrieval", name="search", query="b", context_ids=["docs/x.md", "docs/p1.md"]),
        Step(id="s3", kind="tool_call", name="sql", arguments={"q": "a"}),
        Step(id="s4", kind="retrieval", name="search", query="c", context_ids=["docs/c2.md"]),
        Step(id="s5", kind="answer", output="The client is in Oslo [2]."),
    ],
)
METRICS = [
    HopRecall(),
    HopCoverage(),
    HopPrecision(HopPrecision.Options(k=1)),
    StepBlame(),
    ToolCorrectness(),
    ArgumentCorrectness(),
    TrajectoryMatch(TrajectoryMatch.Options(mode="superset", count_retrievals=True)),
    StepEfficiency(StepEfficiency.Options(count_retrievals=True)),
]


def test_the_shared_work_is_done_once_per_unit_and_the_values_are_those_scored_alone():
    unit = CountingUnit(SAMPLE, OUTPUT)
    together = [metric.score_unit(unit) for metric in METRICS]
    assert together == [metric.score(SAMPLE, OUTPUT) for metric in METRICS]
    # hop matching with all positions and with k=1; compared calls without and with the retrievals as calls
    assert len(unit.computed) == len(set(unit.computed)) == 4
    assert [round(v.value, 4) for v in together] == [0.75, 1.0, 0.5, 1.0, 0.5, 1.0, 1.0, 0.6667]


def test_a_unit_of_another_output_computes_afresh():
    unit = CountingUnit(SAMPLE, OUTPUT)
    HopRecall().score_unit(unit)
    missed = OUTPUT.model_copy(update={"trajectory": OUTPUT.trajectory[:3] + OUTPUT.trajectory[4:]})
    other = CountingUnit(SAMPLE, missed)
    assert HopCoverage().score_unit(other).value == 0.5 and len(other.computed) == 1
    assert StepBlame().score_unit(other).details["blame"] == "missed_hop" and len(other.computed) == 1
