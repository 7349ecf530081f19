"""GenAI traces as the OpenTelemetry SDK writes them (issue 38, item 22): the question is the root span's user
message or the retrieval span's ``gen_ai.retrieval.query.text``, never the whole prompt of the model call; the
GenAI events sent as OTLP log records (``POST /v1/logs``) are read as their span's events, whether they arrive
before or after the span."""

from __future__ import annotations

import json

import httpx
import pytest

from ragassay.store import open_store
from ragassay.traces import read_traces
from ragassay.traces.receiver import Receiver

from otlp_traces import request, sid, span, tid

pytest.importorskip("opentelemetry.sdk._logs")

QUESTION = "Which river is the longest?"
DOC = "The Nile is about 6,650 km long."
PROMPT = f"Answer from the context.\nContext: {DOC}\nQuestion: {QUESTION}"
ANSWER = "The Nile."


@pytest.fixture
def store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'results.db'}")
    yield store
    store.close()


def _post(url: str, spans: list[dict]) -> None:
    reply = httpx.post(url, content=json.dumps(request(spans)), headers={"content-type": "application/json"})
    assert reply.status_code == 200, reply.text


def test_the_question_is_the_roots_user_message_or_the_retrieval_query(store):
    """A root ``invoke_agent`` span with ``gen_ai.input.messages`` gives its last user message; a root with no
    input gives the retrieval span's query; the chat span's prompt (context included) is never the question."""
    chat = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps([{"role": "user", "content": PROMPT}])}
    chat["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "content": ANSWER}])
    retrieval = {"gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": QUESTION}
    retrieval["gen_ai.retrieval.documents"] = json.dumps([{"id": "d1", "content": DOC}])
    agent = {"gen_ai.operation.name": "invoke_agent"}
    agent["gen_ai.input.messages"] = json.dumps(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
    )
    with Receiver(store) as receiver:
        for n, root in ((1, agent), (2, {"gen_ai.operation.name": "invoke_agent"})):
            t = tid(n)
            _post(
                receiver.url,
                [
                    span(t, sid(n, 1), None, "invoke_agent rag", root, 0, 30),
                    span(t, sid(n, 2), sid(n, 1), "retrieval", retrieval if n == 2 else {}, 1, 5),
                    span(t, sid(n, 3), sid(n, 1), "chat", chat, 6, 29),
                ],
            )
    traces = sorted(read_traces(store), key=lambda trace: trace.trace_id)
    assert [trace.question for trace in traces] == [QUESTION, QUESTION]
    assert [trace.answer for trace in traces] == [ANSWER, ANSWER]


def test_genai_events_sent_as_log_records_by_the_sdk_are_read(store):
    """The real SDK: spans through its OTLP span exporter to /v1/traces, the chat's events (user message, choice)
    through its OTLP log exporter to /v1/logs (so the events arrive before their span, which is sent when it ends);
    both traces map to the question and answer of the events, and a record without a span is counted, not stored."""
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    with Receiver(store) as receiver:
        base = receiver.url.removesuffix("/v1/traces")
        resource = Resource({"service.name": "genai-app"})
        tracing = TracerProvider(resource=resource)
        tracing.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces", timeout=30)))
        logging = LoggerProvider(resource=resource)
        logging.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{base}/v1/logs")))
        tracer, logger = tracing.get_tracer("genai-app"), logging.get_logger("genai-app")
        for question, answer in ((QUESTION, ANSWER), ("Which lake is the deepest?", "Lake Baikal.")):
            with tracer.start_as_current_span("invoke_agent rag") as root:
                root.set_attribute("gen_ai.operation.name", "invoke_agent")
                with tracer.start_as_current_span("chat model") as chat:
                    chat.set_attribute("gen_ai.operation.name", "chat")
                    logger.emit(event_name="gen_ai.user.message", body={"content": question})
                    logger.emit(event_name="gen_ai.choice", body={"index": 0, "message": {"content": answer}})
        logger.emit(event_name="gen_ai.user.message", body={"content": "no span"})  # outside any span
        tracing.shutdown()
        logging.shutdown()
        stats = receiver.stats
    traces = sorted(read_traces(store), key=lambda trace: trace.question)
    assert [(t.question, t.answer) for t in traces] == [
        ("Which lake is the deepest?", "Lake Baikal."),
        (QUESTION, ANSWER),
    ]
    assert all(len(t.spans) == 2 and not any(s.otel_kind == "LOG_RECORD" for s in t.spans) for t in traces)
    assert (stats.log_records, stats.log_records_dropped, stats.rejected) == (4, 1, 0)
