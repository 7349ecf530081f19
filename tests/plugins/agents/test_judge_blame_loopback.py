"""``step_blame_judge`` through a run at a scripted loopback judge: the judge's blame becomes the shared step-blame
details (step id, 0-based index, kind, reason); 20% injected faults change nothing; a step that does not exist is
re-asked and, when it stays, unscored with the raw reply; the validation of a blame against the trajectory."""

from __future__ import annotations

import pytest

from ragassay.plugins.agents.judge_blame import check_blame

from agent_judge import SCENARIOS, SCORED, AgentJudge, scored
from servers.faults import FAULTS

pytest.importorskip("openai")

COPIES = 5


def expected_details(key: str) -> dict:
    blame, number = SCENARIOS[key][3]
    steps = SCENARIOS[key][1]
    step = None if number is None else steps[number - 1]
    return {
        "blame": blame,
        "step": None if step is None else step.id,
        "step_index": None if number is None else number - 1,
        "kind": None if step is None else step.kind,
        "hop": None,
        "reason": f"scripted {blame}",
    }


def check(records) -> None:
    for copy in range(COPIES):
        for key in SCORED:
            record = records[(f"{key}-{copy}", "step_blame_judge")]
            want = expected_details(key)
            assert record.value == (1.0 if want["blame"] == "ok" else 0.0), (key, copy)
            assert {k: record.details[k] for k in want} == want, (key, copy)


def test_the_judges_blame_becomes_the_step_blame_details(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records, calls = scored(tmp_path, AgentJudge(), ["step_blame_judge"], COPIES)
    check(records)
    assert calls == COPIES * len(SCORED)
    missed = records[("missed-0", "step_blame_judge")].details
    assert (missed["step"], missed["step_index"], missed["kind"]) == ("s3", 2, "retrieval")
    assert missed["judge"].startswith("step_blame_judge:openai:ragassay-step-blame-1:")


def test_injected_faults_change_no_value(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    judge = AgentJudge(fault_every=5)
    records, calls = scored(tmp_path, judge, ["step_blame_judge"], COPIES)
    check(records)
    assert set(judge.faulted.values()) == set(FAULTS)
    assert len(judge.faulted) == len(judge.seen) // 5 and len(judge.seen) == COPIES * len(SCORED)
    assert calls > COPIES * len(SCORED)


def test_both_judges_in_one_run_give_the_same_values_with_faults(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    metrics = ["trajectory_goal", "step_blame_judge"]
    clean, _ = scored(tmp_path / "clean", AgentJudge(), metrics, COPIES)
    judge = AgentJudge(fault_every=5)
    faulted, _ = scored(tmp_path / "faulted", judge, metrics, COPIES)
    assert set(judge.faulted.values()) == set(FAULTS) and len(judge.faulted) == len(judge.seen) // 5
    assert {k: (r.value, r.details.get("step")) for k, r in faulted.items() if k[1] in metrics} == {
        k: (r.value, r.details.get("step")) for k, r in clean.items() if k[1] in metrics
    }
    assert sum(r.value is not None for k, r in clean.items() if k[1] in metrics) == COPIES * len(SCORED) * 2


def test_a_step_that_does_not_exist_is_unscored_with_the_raw_reply(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    judge = AgentJudge()
    records, calls = scored(tmp_path, judge, ["step_blame_judge"], 1, broken=True)
    record = records[("broken-0", "step_blame_judge")]
    assert record.value is None and "blame judge reply not usable" in record.unscored_reason
    assert "step 99 does not exist" in record.unscored_reason
    assert '"step": 99' in record.details["raw"]
    assert calls > len(SCORED) + 1  # the invalid reply was asked again before giving up
    assert records[("ok-0", "step_blame_judge")].value == 1.0


KINDS = ("model_call", "retrieval", "tool_call", "answer")


@pytest.mark.parametrize(
    "blame, step, error",
    [
        ("ok", None, None),
        ("ok", 2, "names no step"),
        ("missed_hop", 2, None),
        ("missed_hop", 3, None),  # a search tool call
        ("missed_hop", 4, "is an answer step"),
        ("missed_hop", None, "needs the number"),
        ("missed_hop", 5, "does not exist"),
        ("missed_hop", 0, "does not exist"),
        ("wrong_tool", 1, "is a model_call step"),
        ("loop", 3, None),
        ("unsupported_answer", 4, None),
        ("unsupported_answer", 1, None),  # the model call that wrote it
        ("unsupported_answer", 2, "is a retrieval step"),
        ("no_answer", None, None),
        ("no_answer", 4, None),
        ("tool_error", 3, None),
        ("tool_error", 1, None),
        ("tool_error", 4, "any step but the answer"),
    ],
)
def test_blame_validation(blame, step, error):
    if error is None:
        check_blame(blame, step, KINDS)
    else:
        with pytest.raises(ValueError, match=error):
            check_blame(blame, step, KINDS)
