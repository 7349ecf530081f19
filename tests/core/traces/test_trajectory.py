"""Spans -> trajectory: hand-written GenAI and OpenInference traces (tool errors, nested agents, missing
attributes, spans that are no step) import field-equal to their hand-written trajectories, through the store
and straight from spans; the spans are not changed and the order of the spans given does not matter."""

from __future__ import annotations

import json

import pytest

from ragassay.store import open_store
from ragassay.traces import TraceMapping, scan_traces, spans_to_trajectory, trace_trajectory
from ragassay.traces.ingest import import_paths

from otlp_traces import request, sid, span, tid
from trajectory_fixtures import (
    ANSWER,
    GENAI_SKIPPED,
    OPENINFERENCE_SKIPPED,
    QUESTION,
    genai_expected,
    genai_request,
    openinference_expected,
    openinference_request,
)


def _stored_traces(tmp_path, *requests):
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'results.db'}"
    store = open_store(url)
    try:
        import_paths(store, [tmp_path / "t.jsonl"])
    finally:
        store.close()
    return {t.trace_id: t for t in scan_traces(url) if hasattr(t, "spans")}


@pytest.fixture
def traces(tmp_path):
    return _stored_traces(tmp_path, genai_request(), openinference_request())


def _assert_steps_equal(got, expected):
    assert [s.id for s in got] == [s.id for s in expected]
    for step, want in zip(got, expected, strict=True):
        assert step.model_dump() == want.model_dump(), step.id


@pytest.mark.parametrize(
    ("n", "expected", "skipped"),
    [(41, genai_expected, GENAI_SKIPPED), (42, openinference_expected, OPENINFERENCE_SKIPPED)],
    ids=["genai", "openinference"],
)
def test_a_stored_trace_imports_into_its_hand_written_trajectory(traces, n, expected, skipped):
    trace = traces[tid(n)]
    assert (trace.question, trace.answer) == (QUESTION, ANSWER)
    found = trace_trajectory(trace)
    _assert_steps_equal(found.steps, expected())
    assert found.skipped == skipped


def test_span_order_does_not_matter_and_the_spans_are_left_as_they_are(traces):
    trace = traces[tid(41)]
    before = [s.model_dump() for s in trace.spans]
    shuffled = list(reversed(trace.spans))
    assert spans_to_trajectory(shuffled, answer=ANSWER).steps == genai_expected()
    assert [s.model_dump() for s in trace.spans] == before


def test_no_answer_no_answer_step_and_a_span_without_any_kind_is_counted_unknown():
    from ragassay.traces import TraceSpan

    spans = [
        TraceSpan(span_id="b" * 16, name="work", attributes={}),
        TraceSpan(span_id="c" * 16, parent_span_id="b" * 16, name="x", attributes={"gen_ai.operation.name": "chat"}),
    ]
    found = spans_to_trajectory(spans)
    assert [(s.kind, s.parent_id, s.latency_s, s.started_at) for s in found.steps] == [("model_call", None, None, None)]
    assert found.skipped == {"": 1}


def test_mapping_span_kinds_make_a_named_span_a_step(tmp_path):
    t = tid(7)
    spans = [
        span(t, sid(7, 1), None, "ask", {"input.value": "q?", "output.value": "a."}, 0, 100),
        span(t, sid(7, 2), sid(7, 1), "vector_search", {"input.value": "q?"}, 10, 20),
    ]
    trace = _stored_traces(tmp_path, request(spans))[t]
    plain = trace_trajectory(trace)
    assert [s.kind for s in plain.steps] == ["answer"] and plain.skipped == {"": 2}
    mapped = trace_trajectory(trace, TraceMapping(span_kinds={"vector_search": "RETRIEVER", "ask": "AGENT"}))
    assert [(s.kind, s.parent_id, s.query) for s in mapped.steps] == [
        ("agent", None, None),
        ("retrieval", sid(7, 1), "q?"),
        ("answer", None, None),
    ]
