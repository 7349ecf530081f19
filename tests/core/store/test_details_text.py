"""How a value's details are stored (core/store/rows.py ``details_text``): standard JSON with sorted keys, the
same data back from ``json.loads``; what orjson refuses is written by the standard library's encoder."""

from __future__ import annotations

import json

import numpy as np

from ragassay.store.rows import details_text


def test_sorted_standard_json_that_reads_back_the_same():
    details = {"hops": [{"recall": 1.0, "step": None, "gold": ["d#0"]}], "first_failed_hop": None, "note": "é ü"}
    stored = details_text(details)
    assert json.loads(stored) == details
    assert list(json.loads(stored)) == ["first_failed_hop", "hops", "note"]  # sorted, whatever the insertion order
    assert list(json.loads(stored)["hops"][0]) == ["gold", "recall", "step"]
    assert details_text({"b": 1, "a": 2}) == details_text({"a": 2, "b": 1})


def test_what_orjson_refuses_is_written_by_the_standard_encoder():
    assert json.loads(details_text({2: "x", 1: "y"})) == {"1": "y", "2": "x"}  # keys that are not strings
    assert json.loads(details_text({"big": 2**70})) == {"big": 2**70}  # beyond 64 bits
    assert json.loads(details_text({"n": np.float64(0.25)})) == {"n": 0.25}  # a numpy number


def test_non_finite_floats_are_null():
    assert json.loads(details_text({"x": float("nan"), "y": float("inf")})) == {"x": None, "y": None}
