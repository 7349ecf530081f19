"""The timeline of one trajectory as plain data: nesting depth from parent ids (unknown parents and cycles at the
top), gold per hop marked by chunk or document id, the blamed step found by id or else by index, the hop metric's
found and finding step, long texts cut; on the hand-built agents run (tests/trajectory_runs.py)."""

from __future__ import annotations

import pytest

from ragassay.models import Hop, RAGOutput, Sample, Step
from ragassay.present.trajectory_view import TEXT_CHARS, step_rows, trajectory_timeline
from ragassay.results import read_run

from trajectory_runs import write_trajectory_run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store, run_id = write_trajectory_run(tmp_path_factory.mktemp("trajectory-view") / "results.db")
    try:
        yield read_run(store, run_id)
    finally:
        store.close()


SAMPLE = Sample(
    question_id="x",
    question="?",
    reference_context_ids=["d1", "d2"],
    hops=[Hop(index=1, reference_context_ids=["d1"]), Hop(index=2, reference_context_ids=["d2#3"])],
)


def output(*steps: Step) -> RAGOutput:
    return RAGOutput(answer="a", trajectory=list(steps))


def test_depths_gold_and_the_blame_by_index(run):
    steps = [
        Step(id="a", kind="agent", name="outer"),
        Step(id="b", kind="agent", parent_id="a", name="inner"),
        Step(id="c", kind="retrieval", parent_id="b", context_ids=["d1#0", "d2#3"], document_ids=["d1", "d2"]),
        Step(id="d", kind="tool_call", parent_id="nowhere", name="t", arguments={"k": [1, 2]}, result="ok"),
        Step(id="e", kind="agent", parent_id="f"),
        Step(id="f", kind="agent", parent_id="e"),  # a cycle: neither sits below the other for ever
    ]
    blame = {"blame": "missed_hop", "step": None, "step_index": 2, "kind": "retrieval", "hop": 2, "reason": "r"}
    timeline = trajectory_timeline(run, SAMPLE, output(*steps), {"blame": (0.0, blame)})
    assert [s["depth"] for s in timeline["steps"]] == [0, 1, 2, 0, 1, 1]
    retrieval = timeline["steps"][2]
    assert [(c["id"], c["hops"], c["reference"]) for c in retrieval["contexts"]] == [
        ("d1#0", [1], True),  # gold of hop 1 by its document
        ("d2#3", [2], True),  # gold of hop 2 by the chunk id
    ]
    assert [s["blamed"] for s in timeline["steps"]] == [False, False, True, False, False, False]
    assert timeline["steps"][3]["lines"] == [("arguments", '{"k": [1, 2]}'), ("result", "ok")]
    assert [(h["index"], h["found"]) for h in timeline["hops"]] == [(1, None), (2, None)]  # no hop metric value
    assert step_rows("s", timeline)[2]["retrieved"] == "d1#0 [hop 1], d2#3 [hop 2]"


def test_the_blame_by_step_id_wins_and_ok_marks_nothing(run):
    steps = [Step(id="s1", kind="retrieval"), Step(id="s2", kind="answer", output="x" * (TEXT_CHARS + 50))]
    by_id = {"blame": "unsupported_answer", "step": "s2", "step_index": 0, "kind": "answer", "hop": None}
    timeline = trajectory_timeline(run, SAMPLE, output(*steps), {"blame_judge": (0.0, {**by_id, "reason": ""})})
    assert [s["blamed"] for s in timeline["steps"]] == [False, True] and timeline["blame"]["metric"] == "blame_judge"
    (label, text), *_ = timeline["steps"][1]["lines"]
    assert label == "answer" and len(text) == TEXT_CHARS and text.endswith("…")
    ok = {"blame": "ok", "step": "s2", "step_index": None, "kind": None, "hop": None, "reason": ""}
    assert not any(s["blamed"] for s in trajectory_timeline(run, SAMPLE, output(*steps), {"blame": (1.0, ok)})["steps"])


def test_the_hop_metric_says_what_was_found(run):
    hops = [{"index": 1, "found": True, "step": "s1"}, {"index": 2, "found": False, "step": None}]
    scored = {"coverage": (0.5, {"hops": hops, "first_failed_hop": 2})}
    timeline = trajectory_timeline(run, SAMPLE, output(Step(id="s1", kind="retrieval")), scored)
    assert [(h["index"], h["found"], h["step"]) for h in timeline["hops"]] == [(1, True, "s1"), (2, False, None)]
    assert timeline["hop_metric"] == "coverage"


def test_no_trajectory_no_timeline(run):
    assert trajectory_timeline(run, SAMPLE, None, {}) is None
    assert trajectory_timeline(run, SAMPLE, RAGOutput(answer="a"), {}) is None
