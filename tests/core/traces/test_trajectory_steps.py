"""A returned step list validated into Steps: ids by position when left out, Steps passed through, nested agents
linked only to earlier agent steps."""

from __future__ import annotations

import pytest

from ragassay import Step
from ragassay.traces import steps_from_dicts


def test_ids_by_position_steps_passed_through_and_nested_agents():
    given = [
        {"kind": "agent", "id": 1, "name": "outer"},
        {"kind": "agent", "id": "inner", "parent_id": "1"},
        Step(id="t", kind="tool_call", parent_id="inner", name="search"),
        {"kind": "answer", "output": "done"},
    ]
    steps = steps_from_dicts(given, "w")
    assert [(s.id, s.kind, s.parent_id) for s in steps] == [
        ("1", "agent", None),
        ("inner", "agent", "1"),
        ("t", "tool_call", "inner"),
        ("s4", "answer", None),
    ]
    assert steps[2] is given[2]
    assert steps_from_dicts(None, "w") == [] and steps_from_dicts([], "w") == []


def test_a_parent_named_later_is_refused():
    with pytest.raises(ValueError, match=r"w: trajectory\[0\] \('t'\) names parent_id 'a', which is no earlier"):
        steps_from_dicts([{"kind": "tool_call", "id": "t", "parent_id": "a"}, {"kind": "agent", "id": "a"}], "w")
