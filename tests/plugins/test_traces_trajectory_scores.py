"""Production traces of agents scored with the trajectory metrics end to end: the hand-written GenAI and
OpenInference traces (tests/trajectory_fixtures.py) are imported (``ragassay traces import``), sampled by the
``traces`` source and replayed by ``trace_replay``. Without expected calls ``loop_free`` scores, and a call metric
is refused before the run with what to do; a dataset of the test's own (the same samples, trace ids in
``metadata.trace``, plus ``expected_tool_calls``) answered by ``trace_replay`` scores every metric as computed by
hand below from the fixtures' trajectories.

GenAI trace, its calls in order: search_projects {client: Acme} (s4), fetch_budget {project: p1} (s7, failed),
and a bare execute_tool span (s10: name "", no arguments); one retrieval "Acme p1 budget" (s6). Expected:
search_projects {client: Acme}, fetch_budget {project: p2}.

OpenInference trace: lookup_client {name: Acme} (s3), fetch_budget {client_id: 7} (s7, failed), calculator (s9,
no JSON arguments: ``{}``); two retrievals with the same query "Acme budget" (retrieve s5, rerank s6). Expected:
lookup_client {name: Acme}, fetch_budget {client_id: 7}.

=====================  ========  ==============  =====
metric                 GenAI     OpenInference   why
=====================  ========  ==============  =====
tool_correctness       2/2       2/2             both expected tools were called (by name)
argument_correctness   1/2       2/2             GenAI fetched p1's budget, p2's was expected
trajectory_match       0         0               strict: 3 calls made, 2 expected
match_superset         0         1               GenAI never called fetch_budget {project: p2}
step_efficiency        2/3       2/3             2 calls needed, 3 made
loop_free              1         1               no action occurs more than twice in a row
loop_free_once         1         0               limit 1: OpenInference's two retrievals of "Acme budget"
=====================  ========  ==============  =====
"""

from __future__ import annotations

import json

import pytest

import ragassay

from conftest import ragassay_cli
from otlp_traces import sid, tid
from trace_runs import read
from trajectory_fixtures import genai_request, openinference_request

LOOPS = """
[[evaluation.metrics]]
name = "loop_free"
[[evaluation.metrics]]
name = "loop_free"
label = "loop_free_once"
options = { limit = 1 }
"""
METRICS = (
    LOOPS
    + """
[[evaluation.metrics]]
name = "tool_correctness"
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
FROM_TRACES = '[dataset]\nsource = "traces"\n[systems.prod]\nrag = "trace_replay"\n' + LOOPS
OWN_DATASET = '[dataset]\noptions = { path = "qa.jsonl" }\n[systems.prod]\nrag = "trace_replay"\n' + METRICS
GENAI, OPENINFERENCE = tid(41), tid(42)
EXPECTED = {
    GENAI: [
        {"name": "search_projects", "arguments": {"client": "Acme"}},
        {"name": "fetch_budget", "arguments": {"project": "p2"}},
    ],
    OPENINFERENCE: [
        {"name": "lookup_client", "arguments": {"name": "Acme"}},
        {"name": "fetch_budget", "arguments": {"client_id": 7}},
    ],
}
VALUES = {  # hand-computed in the module docstring
    GENAI: {
        "tool_correctness": 1.0,
        "argument_correctness": 0.5,
        "trajectory_match": 0.0,
        "match_superset": 0.0,
        "step_efficiency": 2 / 3,
        "loop_free": 1.0,
        "loop_free_once": 1.0,
    },
    OPENINFERENCE: {
        "tool_correctness": 1.0,
        "argument_correctness": 1.0,
        "trajectory_match": 0.0,
        "match_superset": 1.0,
        "step_efficiency": 2 / 3,
        "loop_free": 1.0,
        "loop_free_once": 0.0,
    },
}


def _scores(root, config: str):
    (root / "ragassay.toml").write_text(config)
    summary = ragassay.run(root)
    return summary.run_id, {(r.question_id, r.label): r for r in summary.data().scores}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("agent-traces")
    (root / "ragassay.toml").write_text(FROM_TRACES)
    requests = [genai_request(), openinference_request()]
    (root / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    imported = ragassay_cli("traces", "import", str(root / "traces.jsonl"), "--config", str(root / "ragassay.toml"))
    assert imported.returncode == 0, imported.stderr
    return root


def test_traces_without_expected_calls_score_loops_and_refuse_the_call_metrics(project):
    _, scores = _scores(project, FROM_TRACES)
    for trace in (GENAI, OPENINFERENCE):
        assert scores[(trace, "loop_free")].value == VALUES[trace]["loop_free"]
        assert scores[(trace, "loop_free_once")].value == VALUES[trace]["loop_free_once"]
    (project / "ragassay.toml").write_text(FROM_TRACES + METRICS.removeprefix(LOOPS))
    with pytest.raises(ragassay.ConfigError, match="'tool_correctness' needs expected_tool_calls, and none of the"):
        ragassay.run(project)


def test_traces_with_the_datasets_expected_calls_score_as_hand_computed(project):
    run_id, _ = _scores(project, FROM_TRACES)
    samples = read(project, run_id).samples
    rows = [
        {
            "question_id": s.question_id,
            "question": s.question,
            "metadata": {"trace": s.metadata["trace"]},
            "expected_tool_calls": EXPECTED[s.question_id],
        }
        for s in samples
    ]
    (project / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, scores = _scores(project, OWN_DATASET)
    for trace, values in VALUES.items():
        assert {label: scores[(trace, label)].value for label in values} == pytest.approx(values), trace
    # the details name the steps compared: GenAI's failed fetch_budget call is the one whose arguments differ
    calls = scores[(GENAI, "argument_correctness")].details["calls"]
    assert [(c["name"], c["step"], c["match"]) for c in calls] == [
        ("search_projects", sid(41, 4), True),
        ("fetch_budget", sid(41, 7), False),
    ]
    assert [c["step"] for c in scores[(GENAI, "tool_correctness")].details["extra_calls"]] == [sid(41, 10)]
    assert [c["step"] for c in scores[(GENAI, "trajectory_match")].details["extra_calls"]] == [sid(41, 7), sid(41, 10)]
    assert scores[(GENAI, "step_efficiency")].details["counted"] == [
        {"step": sid(41, k), "step_index": i, "kind": "tool_call", "name": name}
        for k, i, name in [(4, 2, "search_projects"), (7, 5, "fetch_budget"), (10, 7, "")]
    ]
    (loop,) = scores[(OPENINFERENCE, "loop_free_once")].details["loops"]
    assert (loop["repeats"], loop["steps"], loop["actions"]) == (2, [sid(42, 5), sid(42, 6)], ["retrieval acme budget"])
