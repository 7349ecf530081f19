"""``jsonable`` (plugins/agents/trajectory_calls.py), which the call comparison's details rows use: its copy
of plain JSON equals the JSON round trip it replaces, and anything else still goes through the round trip."""

from __future__ import annotations

import enum
import json

import pytest

from ragassay.plugins.agents.trajectory_calls import jsonable


class Colour(enum.Enum):
    RED = "red"


def round_trip(value):
    return json.loads(json.dumps(value, default=str))


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"item": 3, "hop": 1, "name": "x", "ok": True, "none": None, "ratio": 0.5},
        {"nested": {"a": [1, "b", {"c": [None, False]}]}, "empty": [], "deep": {"x": {}}},
        {"tuple": (1, 2)},  # a tuple becomes a list
        {"keys": {1: "a", None: "b", 2.5: "c"}},  # non-str keys become text
        {"enum": Colour.RED, "set": {1}},  # not JSON: their text
        {"float": float("inf")},
    ],
)
def test_jsonable_equals_the_json_round_trip(arguments):
    copied = jsonable(arguments)
    assert copied == round_trip(arguments)
    assert json.dumps(copied) == json.dumps(round_trip(arguments))  # types too (True stays true, 1 stays 1)


def test_jsonable_returns_a_fresh_copy():
    arguments = {"a": {"b": [1]}}
    copied = jsonable(arguments)
    copied["a"]["b"].append(2)
    assert arguments == {"a": {"b": [1]}}
