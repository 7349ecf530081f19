"""One span, one step: odd or missing attribute values give empty fields, never an error; the error of a span
comes from its status, ``error.type`` and its ``exception`` event."""

from __future__ import annotations

import json

import pytest

from ragassay.traces import SpanEvent, TraceSpan, spans_to_trajectory
from ragassay.traces.trajectory_fields import span_error


def test_odd_values_give_empty_fields_not_errors():
    tool = TraceSpan(
        span_id="d" * 16,
        name="execute_tool x",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": "{not json", "tool.id": 5},
        status={"code": "STATUS_CODE_ERROR", "message": ""},
    )
    retrieval = TraceSpan(
        span_id="e" * 16,
        name="r",
        attributes={
            "gen_ai.operation.name": "retrieval",
            "gen_ai.retrieval.documents": json.dumps([{"id": "a", "score": 1}, {"score": "high"}, "junk"]),
        },
    )
    model = TraceSpan(
        span_id="f" * 16,
        name="llm",
        attributes={
            "openinference.span.kind": "LLM",
            "llm.token_count.prompt": "12",
            "llm.token_count.completion": True,
        },
    )
    tool_step, retrieval_step, model_step = spans_to_trajectory([tool, retrieval, model]).steps
    assert (tool_step.name, tool_step.call_id, tool_step.arguments, tool_step.error) == ("x", "5", None, "error")
    assert tool_step.attributes["arguments_raw"] == "{not json"
    assert (retrieval_step.context_ids, retrieval_step.scores, retrieval_step.query) == ([], [], None)
    assert retrieval_step.attributes["documents_without_id"] == 1
    assert (model_step.usage.input_tokens, model_step.usage.output_tokens) == (12, 0)


def test_a_json_retriever_input_gives_its_query_and_scores_only_when_every_document_has_one():
    span = TraceSpan(
        span_id="a" * 16,
        name="retrieve",
        attributes={
            "openinference.span.kind": "RETRIEVER",
            "input.value": '{"query": "acme budget", "k": 2}',
            "retrieval.documents.0.document.id": 7,
            "retrieval.documents.1.document.id": "d2",
            "retrieval.documents.1.document.score": 0.5,
        },
    )
    (step,) = spans_to_trajectory([span]).steps
    assert (step.query, step.context_ids, step.document_ids, step.scores) == (
        "acme budget",
        ["7", "d2"],
        ["7", "d2"],
        [],
    )


@pytest.mark.parametrize(
    ("status", "attributes", "events", "error"),
    [
        ({}, {}, [], None),
        ({"code": "STATUS_CODE_OK"}, {}, [], None),
        ({"code": "STATUS_CODE_ERROR", "message": "boom"}, {}, [], "boom"),
        ({}, {"error.type": "timeout"}, [], "timeout"),
        (
            {"code": "STATUS_CODE_ERROR", "message": "HTTP 503"},
            {},
            [("ServiceUnavailable", "HTTP 503")],
            "ServiceUnavailable: HTTP 503",
        ),
        ({"code": "STATUS_CODE_ERROR"}, {}, [("ValueError", "bad id")], "ValueError: bad id"),
        ({"code": "STATUS_CODE_ERROR", "message": "timeout"}, {"error.type": "timeout"}, [], "timeout"),
    ],
)
def test_span_error(status, attributes, events, error):
    span = TraceSpan(
        span_id="a" * 16,
        name="s",
        status=status,
        attributes=attributes,
        events=[
            SpanEvent(name="exception", attributes={"exception.type": t, "exception.message": m}) for t, m in events
        ],
    )
    assert span_error(span) == error
