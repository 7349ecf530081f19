"""ATIF trajectory files scored with the trajectory metrics end to end: the hand-written ATIF-v1.7 file
(tests/trajectory_fixtures.py) is read by the ``atif`` source and replayed by ``atif_replay``; without expected calls
``loop_free`` scores, and a dataset of the test's own (the trajectory ids as question ids, with
``expected_tool_calls``) answered by ``atif_replay`` scores every metric as computed by hand below.

The fixture's calls in order: lookup_client {name: Acme} (3.1), fetch_budget {client_id: 7} (3.2, failed),
delegate_research {topic: Acme budget} (4.1), and the embedded subagent's search {q: Acme budget} (4.a1/2.1).
Files run-1 and run-2 are the fixture; run-3 is the fixture whose model turn calls lookup_client three times with
the same arguments (3.1, 3.2, 3.3) instead of lookup_client and fetch_budget.

- run-1, expected the four calls as made: every metric 1.
- run-2, expected fetch_budget {client_id: 7}, lookup_client {name: ACME}: both tools called (tool_correctness
  2/2), in the other order (``ordered``: the longest common subsequence of names is 1 of 2); lookup_client's
  argument differs (argument_correctness 1/2); strict 0 (4 calls, 2 expected), superset 0 (no call with ACME);
  step_efficiency 2/4.
- run-3, expected lookup_client {name: Acme}, search {q: Acme budget}: made lookup_client x3, delegate_research,
  search. tool_correctness 1, ordered 1, argument_correctness 1; strict 0, superset 1; step_efficiency 2/5;
  loop_free 0 (one call three times in a row, more than the limit 2).
"""

from __future__ import annotations

import copy
import json

import pytest

import ragassay

from trajectory_fixtures import atif_document

LOOPS = """
[[evaluation.metrics]]
name = "loop_free"
"""
METRICS = (
    LOOPS
    + """
[[evaluation.metrics]]
name = "tool_correctness"
[[evaluation.metrics]]
name = "tool_correctness"
label = "tool_correctness_ordered"
options = { ordered = true }
[[evaluation.metrics]]
name = "argument_correctness"
[[evaluation.metrics]]
name = "trajectory_match"
[[evaluation.metrics]]
name = "trajectory_match"
label = "match_superset"
options = { mode = "superset" }
[[evaluation.metrics]]
name = "step_efficiency"
"""
)
FROM_FILES = '[dataset]\nsource = "atif"\noptions = { path = "trajectories" }\n[systems.agent]\nrag = "atif_replay"\n'
OWN_DATASET = (
    '[dataset]\noptions = { path = "qa.jsonl" }\n'
    '[systems.agent]\nrag = { name = "atif_replay", options = { path = "trajectories" } }\n'
)
LOOKUP = {"name": "lookup_client", "arguments": {"name": "Acme"}}
SEARCH = {"name": "search", "arguments": {"q": "Acme budget"}}
EXPECTED = {
    "run-1-main": [
        LOOKUP,
        {"name": "fetch_budget", "arguments": {"client_id": 7}},
        {"name": "delegate_research", "arguments": {"topic": "Acme budget"}},
        SEARCH,
    ],
    "run-2-main": [
        {"name": "fetch_budget", "arguments": {"client_id": 7}},
        {"name": "lookup_client", "arguments": {"name": "ACME"}},
    ],
    "run-3-main": [LOOKUP, SEARCH],
}
LABELS = (
    "tool_correctness",
    "tool_correctness_ordered",
    "argument_correctness",
    "trajectory_match",
    "match_superset",
    "step_efficiency",
    "loop_free",
)
VALUES = {  # in the order of LABELS, hand-computed in the module docstring
    "run-1-main": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    "run-2-main": (1.0, 0.5, 0.5, 0.0, 0.0, 0.5, 1.0),
    "run-3-main": (1.0, 1.0, 1.0, 0.0, 1.0, 0.4, 0.0),
}


def _looping(session_id: str) -> dict:
    """The fixture whose model turn (step 3) calls lookup_client {name: Acme} three times."""
    document = copy.deepcopy(atif_document(session_id))
    turn = document["steps"][2]
    ids = ["call_1", "call_1b", "call_1c"]
    turn["tool_calls"] = [
        {"tool_call_id": i, "function_name": "lookup_client", "arguments": {"name": "Acme"}} for i in ids
    ]
    turn["observation"] = {"results": [{"source_call_id": i, "content": '{"client_id": 7}'} for i in ids]}
    return document


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("atif-scores")
    folder = root / "trajectories"
    folder.mkdir()
    for name, document in [("t1", atif_document("run-1")), ("t2", atif_document("run-2")), ("t3", _looping("run-3"))]:
        (folder / f"{name}.json").write_text(json.dumps(document), encoding="utf-8")
    return root


def _scores(root, config: str) -> dict:
    (root / "ragassay.toml").write_text(config)
    return {(r.question_id, r.label): r for r in ragassay.run(root).data().scores}


def test_atif_files_without_expected_calls_score_loops_and_refuse_the_call_metrics(project):
    scores = _scores(project, FROM_FILES + LOOPS)
    assert {q: scores[(q, "loop_free")].value for q in VALUES} == {
        "run-1-main": 1.0,
        "run-2-main": 1.0,
        "run-3-main": 0.0,
    }
    (loop,) = scores[("run-3-main", "loop_free")].details["loops"]
    assert (loop["period"], loop["repeats"], loop["steps"]) == (1, 3, ["3.1", "3.2", "3.3"])
    (project / "ragassay.toml").write_text(FROM_FILES + METRICS)
    with pytest.raises(ragassay.ConfigError, match="'tool_correctness' needs expected_tool_calls, and none of the"):
        ragassay.run(project)


def test_atif_files_with_the_datasets_expected_calls_score_as_hand_computed(project):
    rows = [
        {"question_id": q, "question": "What is the budget of Acme's first project?", "expected_tool_calls": calls}
        for q, calls in EXPECTED.items()
    ]
    (project / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    scores = _scores(project, OWN_DATASET + METRICS)
    for question, values in VALUES.items():
        assert tuple(scores[(question, label)].value for label in LABELS) == pytest.approx(values), question
    # the subagent's search is compared like any call: nested steps count, in trajectory order
    rows = scores[("run-1-main", "trajectory_match")].details["expected"]
    assert [(r["name"], r["step"], r["step_index"]) for r in rows] == [
        ("lookup_client", "3.1", 1),
        ("fetch_budget", "3.2", 2),
        ("delegate_research", "4.1", 3),
        ("search", "4.a1/2.1", 6),
    ]
    calls = scores[("run-2-main", "argument_correctness")].details["calls"]
    assert [(c["name"], c["step"], c["match"]) for c in calls] == [
        ("fetch_budget", "3.2", True),
        ("lookup_client", "3.1", False),
    ]
