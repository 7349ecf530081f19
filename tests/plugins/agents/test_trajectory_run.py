"""The deterministic trajectory metrics end to end: a run of the fixed agent (trajectories through the runner and the
store) scores them as the hand-computed values say, and a sample without the reference a metric needs is
unscored with the reason."""

from __future__ import annotations

import pytest

from agent_judge import PLUGIN

EXPECTED = [{"name": "crm", "arguments": {"project": "Apollo"}}]
METRICS = """
[[evaluation.metrics]]
name = "tool_correctness"
[[evaluation.metrics]]
name = "argument_correctness"
[[evaluation.metrics]]
name = "trajectory_match"
options = { mode = "superset" }
[[evaluation.metrics]]
name = "step_efficiency"
options = { steps = "retrievals" }
[[evaluation.metrics]]
name = "token_efficiency"
options = { budget = 300 }
[[evaluation.metrics]]
name = "loop_free"
"""


def test_trajectory_metrics_through_a_run(tmp_path):
    import ragassay

    from conftest import write_project

    hops = [{"index": 1, "description": "Project -> Lead"}, {"index": 2, "description": "Project -> Client"}]
    qa = [
        {"question_id": "tool_error-0", "question": "Who is Apollo's client?", "expected_tool_calls": EXPECTED},
        {"question_id": "wrong_tool-0", "question": "Who is Apollo's client?", "expected_tool_calls": EXPECTED},
        {"question_id": "ok-0", "question": "Who leads Apollo, and its client?", "hops": hops},
    ]
    config = f'[dataset]\noptions = {{ path = "qa.jsonl" }}\n[systems.agent]\nrag = "agentfix/fixed_agent"\n{METRICS}'
    run = ragassay.run(write_project(tmp_path, config, qa=qa, docs={}), plugins=[PLUGIN])
    records = {(r.question_id, r.label): r for r in run.data().scores}
    value = {key: r.value for key, r in records.items()}
    # tool_error-0: one crm call with the expected arguments (it failed: that is the blame's business, not these)
    assert [value[("tool_error-0", m)] for m in ("tool_correctness", "argument_correctness", "trajectory_match")] == [
        1.0,
        1.0,
        1.0,
    ]
    # wrong_tool-0: a weather call instead of crm
    assert value[("wrong_tool-0", "tool_correctness")] == 0.0
    assert value[("wrong_tool-0", "trajectory_match")] == 0.0
    assert "no expected tool was called" in records[("wrong_tool-0", "argument_correctness")].unscored_reason
    assert records[("wrong_tool-0", "tool_correctness")].details["extra_calls"][0]["name"] == "weather"
    # ok-0: two hops, two retrievals; one model call of 150 tokens against a budget of 300
    assert value[("ok-0", "step_efficiency")] == 1.0
    assert value[("ok-0", "token_efficiency")] == 1.0 and records[("ok-0", "token_efficiency")].details["tokens"] == 150
    assert value[("ok-0", "loop_free")] == 1.0
    assert "no expected_tool_calls" in records[("ok-0", "tool_correctness")].unscored_reason
    assert value[("tool_error-0", "token_efficiency")] == pytest.approx(1.0)
    assert "no hops" in records[("tool_error-0", "step_efficiency")].unscored_reason
