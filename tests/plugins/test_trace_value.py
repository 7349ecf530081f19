"""The ``trace_value`` metric reads a number another evaluator stored in the output's trace, and says why when it
cannot."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from ragassay import RAGOutput, Sample, Unscored
from ragassay.plugins.trace_value import TraceValue, TraceValueOptions

SAMPLE = Sample(question_id="q1", question="What?")
PROVENANCE = "RAGChecker's F1, baseline_ragchecker.json"


def _score(trace, path=("ragchecker_metrics", "f1"), **options):
    metric = TraceValue(TraceValueOptions(path=list(path), provenance=PROVENANCE, **options))
    return metric.score(SAMPLE, RAGOutput(answer="a", trace=trace))


def test_reads_the_number_at_the_path():
    assert _score({"ragchecker_metrics": {"f1": 0.296, "recall": 0.2}}) == 0.296
    assert _score({"judge": 3}, path=["judge"]) == 3.0
    assert isinstance(_score({"judge": 3}, path=["judge"]), float)


@pytest.mark.parametrize(
    ("trace", "reason"),
    [
        ({}, "the output's trace has no key 'ragchecker_metrics'"),
        ({"ragchecker_metrics": {"recall": 0.2}}, "the output's trace['ragchecker_metrics'] has no key 'f1'"),
        ({"ragchecker_metrics": [0.3]}, "the output's trace['ragchecker_metrics'] has no key 'f1'"),
        ({"ragchecker_metrics": {"f1": "0.3"}}, "trace['ragchecker_metrics']['f1'] is '0.3', not a finite number"),
        ({"ragchecker_metrics": {"f1": True}}, "is True, not a finite number"),
        ({"ragchecker_metrics": {"f1": None}}, "is None, not a finite number"),
        ({"ragchecker_metrics": {"f1": math.nan}}, "is nan, not a finite number"),
    ],
)
def test_unscored_with_the_reason(trace, reason):
    found = _score(trace)
    assert isinstance(found, Unscored)
    assert reason in found.reason


def test_direction_and_range_are_the_configured_ones():
    options = TraceValueOptions(path=["x"], provenance=PROVENANCE, direction="lower", value_range=(0, 1))
    assert TraceValue.declared(options) == ("lower", (0, 1))
    metric = TraceValue(options)
    assert (metric.direction, metric.value_range) == ("lower", (0, 1))
    assert TraceValue.declared(TraceValueOptions(path=["x"], provenance=PROVENANCE)) == ("higher", (None, None))


@pytest.mark.parametrize(
    "options",
    [
        {"path": [], "provenance": PROVENANCE},
        {"path": ["x"]},
        {"path": ["x"], "provenance": ""},
        {"path": ["x"], "provenance": "p", "key": "x"},
    ],
)
def test_bad_options_are_refused(options):
    with pytest.raises(ValidationError):
        TraceValueOptions(**options)
