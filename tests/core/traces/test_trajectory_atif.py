"""ATIF files (Harbor RFC 0001, v1.7) read into trajectories: the hand-written file imports field-equal to its
hand-written steps (tool error, deterministic dispatch, embedded subagent, unresolvable ref, content parts);
file refs resolve next to the file; malformed files are one clear error naming the file and step."""

from __future__ import annotations

import json

import pytest

from ragassay import DatasetError, TokenUsage
from ragassay.traces import load_atif, read_atif

from trajectory_fixtures import ANSWER, ATIF_SKIPPED, QUESTION, atif_document, atif_expected


def test_the_hand_written_file_imports_into_its_hand_written_trajectory(tmp_path):
    path = tmp_path / "run-1.json"
    path.write_text(json.dumps(atif_document()), encoding="utf-8")
    found = load_atif(path)
    assert [s.id for s in found.steps] == [s.id for s in atif_expected()]
    for step, want in zip(found.steps, atif_expected(), strict=True):
        assert step.model_dump() == want.model_dump(), step.id
    assert (found.question, found.answer, found.session_id, found.trajectory_id) == (
        QUESTION,
        ANSWER,
        "run-1",
        "run-1-main",
    )
    assert found.usage == TokenUsage(input_tokens=360, output_tokens=50, cached_tokens=20, calls=3)
    assert found.skipped == ATIF_SKIPPED
    assert (
        found.latency_s == 9.0
    )  # the question at 10:30:00, the answer at 10:30:09 and found.schema_version == "ATIF-v1.7"


def test_a_file_ref_resolves_next_to_the_file(tmp_path):
    document = atif_document()
    sub = document.pop("subagent_trajectories")[0]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "research.json").write_text(json.dumps(sub), encoding="utf-8")
    ref = document["steps"][3]["observation"]["results"][1]["subagent_trajectory_ref"][0]
    ref["trajectory_path"] = "sub/research.json"
    (tmp_path / "main.json").write_text(json.dumps(document), encoding="utf-8")
    steps = {s.id: s for s in load_atif(tmp_path / "main.json").steps}
    assert "unresolved" in steps["4.a1"].attributes  # the embedded one is gone now
    assert steps["4.a2"].name == "researcher" and "unresolved" not in steps["4.a2"].attributes
    assert [s.id for s in steps.values() if s.parent_id == "4.a2"] == ["4.a2/2", "4.a2/2.1"]


def test_a_subagent_referring_to_itself_stops_at_the_depth_limit():
    document = atif_document()
    sub = document["subagent_trajectories"][0]
    sub["steps"][1]["observation"]["results"].append({"subagent_trajectory_ref": [{"trajectory_id": "research-1"}]})
    steps = read_atif(document, "loop.json").steps
    stopped = [s for s in steps if "deeper than 8" in s.attributes.get("unresolved", "")]
    assert [s.id.count("/") for s in stopped] == [8]
    assert max(s.id.count("/") for s in steps) == 8


def test_a_bare_trajectory_gives_empty_fields():
    found = read_atif({"schema_version": "ATIF-v1.0", "agent": {}, "steps": [{"step_id": 1, "source": "agent"}]}, "x")
    assert [(s.id, s.kind, s.name, s.output, s.usage) for s in found.steps] == [
        ("1", "model_call", "", None, TokenUsage(calls=1))
    ]
    assert (found.question, found.answer, found.latency_s) == ("", "", None)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "an ATIF trajectory is a JSON object, not list"),
        ('{"agent": {}}', "no 'steps' array"),
        ('{"steps": [{"step_id": 1, "source": "robot"}]}', "steps[0] must be an object whose 'source' is"),
        ("{not json", "not a readable ATIF JSON file"),
    ],
)
def test_a_malformed_file_is_one_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match="bad.json") as caught:
        load_atif(path)
    assert message in str(caught.value)
