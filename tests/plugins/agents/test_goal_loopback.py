"""``trajectory_goal`` through a run at a scripted loopback judge: the judge's verdicts become 1 / 0.5 / 0 with the
explanation stored; 20% injected faults change nothing; a reply that stays invalid is unscored with the raw reply;
the prompt shows the trajectory compactly."""

from __future__ import annotations

import pytest

from ragassay import RAGOutput, Sample, Step, testing
from ragassay.plugins.agents.goal import TrajectoryGoal
from ragassay.plugins.agents.trajectory_judging import judge_prompt
from ragassay.plugins.agents.trajectory_prompts import GOAL_PROMPT

from agent_judge import SCENARIOS, SCORED, AgentJudge, scored
from servers.faults import FAULTS

pytest.importorskip("openai")

COPIES = 5
VALUES = {"yes": 1.0, "partly": 0.5, "no": 0.0}


def check(records) -> None:
    for copy in range(COPIES):
        for key in SCORED:
            record = records[(f"{key}-{copy}", "trajectory_goal")]
            assert record.value == VALUES[SCENARIOS[key][2]], (key, copy)
            assert record.details["verdict"] == SCENARIOS[key][2]
            assert record.details["steps"] == len(SCENARIOS[key][1])


def test_the_judges_verdicts_become_values(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records, calls = scored(tmp_path, AgentJudge(), ["trajectory_goal"], COPIES)
    check(records)
    assert calls == COPIES * len(SCORED)  # one call per output
    record = records[("ok-0", "trajectory_goal")]
    assert record.details["explanation"] == "What the user wanted against what the answer gives."
    assert record.details["judge"].startswith("trajectory_goal:openai:ragassay-trajectory-goal-1:")
    assert record.usage.calls == 1


def test_injected_faults_change_no_value(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    judge = AgentJudge(fault_every=5)
    records, calls = scored(tmp_path, judge, ["trajectory_goal"], COPIES)
    check(records)
    assert set(judge.faulted.values()) == set(FAULTS)
    assert len(judge.faulted) == len(judge.seen) // 5 and len(judge.seen) == COPIES * len(SCORED)
    assert calls > COPIES * len(SCORED)


def test_a_reply_that_stays_invalid_is_unscored_with_the_raw_reply(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records, _ = scored(tmp_path, AgentJudge(), ["trajectory_goal"], 1, broken=True)
    record = records[("broken-0", "trajectory_goal")]
    assert record.value is None and "goal judge reply not usable" in record.unscored_reason
    assert "mostly" in record.unscored_reason and '"achieved": "mostly"' in record.details["raw"]
    assert records[("ok-0", "trajectory_goal")].value == 1.0


def test_the_prompt_shows_the_trajectory_compactly():
    long_result = {"rows": ["r" * 50] * 40}
    output = RAGOutput(
        answer="Acme.",
        contexts=["Project Apollo's client is Acme Corp."],
        context_ids=["p2"],
        trajectory=[
            Step(id="a", kind="agent", name="researcher"),
            Step(id="r", kind="retrieval", parent_id="a", query="Apollo client", context_ids=["p2", "zz"]),
            Step(id="t", kind="tool_call", name="sql", arguments={"q": "select"}, result=long_result, error="timeout"),
            Step(id="m", kind="model_call", name="llm", output="Acme."),
            Step(id="e", kind="answer", output="Acme."),
        ],
    )
    metric = testing.component("metric", TrajectoryGoal, generator="openai", max_text_chars=100, max_steps=4)
    prompt = judge_prompt(GOAL_PROMPT, Sample(question_id="q", question="Who is the client?"), output, metric.options)
    assert (
        "Trajectory:\n[1] agent researcher (its steps follow, indented)\n"
        "    [2] retrieval: query 'Apollo client'\n"
        "      (1) p2: Project Apollo's client is Acme Corp.\n"
        "      (2) zz\n"
        '[3] tool_call sql({"q": "select"})\n'
    ) in prompt
    assert "more characters]" in prompt and "  ERROR: timeout" in prompt
    assert "[... 1 more steps not shown]" in prompt and "[5]" not in prompt
    assert prompt.endswith("Final answer:\nAcme.\n")


def test_unscored_without_a_trajectory():
    import asyncio

    metric = testing.component("metric", TrajectoryGoal, generator="openai")
    result = asyncio.run(metric.ascore(Sample(question_id="q", question="?"), RAGOutput(answer="x")))
    assert "no trajectory" in result.reason
