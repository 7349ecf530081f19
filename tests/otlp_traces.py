"""OTLP JSON written by hand from the public specifications (OTLP/HTTP JSON encoding: hex ids, AnyValue
attributes, camelCase fields), in both conventions: OpenInference and the OpenTelemetry GenAI conventions; and
:func:`imported_project`, a project whose results store holds them imported, with :func:`store_rows` to read it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

T0 = 1_735_732_800_000_000_000  # 2025-01-01T12:00:00Z in ns


def any_value(value: Any) -> dict:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # int64 as a JSON string, as the spec writes it
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": attrs(value)}}
    return {"stringValue": str(value)}


def attrs(values: dict) -> list[dict]:
    return [{"key": k, "value": any_value(v)} for k, v in values.items()]


def span(trace_id, span_id, parent, name, attributes=None, start=0, end=1, events=(), kind=1):
    out = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(T0 + start * 1_000_000),
        "endTimeUnixNano": str(T0 + end * 1_000_000),
        "attributes": attrs(attributes or {}),
        "events": [{"name": n, "timeUnixNano": str(T0 + start * 1_000_000), "attributes": attrs(a)} for n, a in events],
        "status": {},
    }
    if parent:
        out["parentSpanId"] = parent
    return out


def request(spans, service="rag-app", version="1.0", extra_resource=None) -> dict:
    resource = {"service.name": service, "service.version": version, **(extra_resource or {})}
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": attrs(resource)},
                "scopeSpans": [{"scope": {"name": "handwritten", "version": "1"}, "spans": spans}],
            }
        ]
    }


def tid(n: int) -> str:
    return f"{n:032x}".replace("0", "a", 1) if n else "a" * 32


def sid(n: int, k: int) -> str:
    return f"{n:08x}{k:08x}".replace("0", "b", 1)


def openinference_trace(n: int, question: str, answer: str, *, rerank=True, tool=True, start=0) -> list[dict]:
    """CHAIN root > RETRIEVER (nested under an AGENT) > RERANKER > TOOL > LLM, the OpenInference way."""
    t = tid(n)
    root, agent, ret, rr, tl, llm = (sid(n, k) for k in range(1, 7))
    spans = [
        span(
            t,
            root,
            None,
            "rag.query",
            {
                "openinference.span.kind": "CHAIN",
                "input.value": question,
                "output.value": answer,
                "session.id": f"s{n % 3}",
                "route": "/ask",
                "app.custom": "kept",
            },
            start,
            start + 900,
        ),
        span(t, agent, root, "agent", {"openinference.span.kind": "AGENT"}, start + 10, start + 500),
        span(
            t,
            ret,
            agent,
            "retrieve",
            {
                "openinference.span.kind": "RETRIEVER",
                "input.value": question,
                "retrieval.documents.0.document.id": "d1",
                "retrieval.documents.0.document.content": "first retrieved",
                "retrieval.documents.0.document.score": 0.9,
                "retrieval.documents.1.document.id": "d2",
                "retrieval.documents.1.document.content": "second retrieved",
                "retrieval.documents.1.document.score": 0.5,
            },
            start + 20,
            start + 100,
        ),
    ]
    if rerank:
        spans.append(
            span(
                t,
                rr,
                agent,
                "rerank",
                {
                    "openinference.span.kind": "RERANKER",
                    "reranker.output_documents.0.document.id": "d2",
                    "reranker.output_documents.0.document.content": "second retrieved",
                    "reranker.output_documents.0.document.score": 3.5,
                },
                start + 110,
                start + 200,
            )
        )
    if tool:
        spans.append(
            span(
                t,
                tl,
                root,
                "lookup_tool",
                {"openinference.span.kind": "TOOL", "tool.name": "lookup", "input.value": '{"q": "x"}'},
                start + 210,
                start + 300,
            )
        )
    spans.append(
        span(
            t,
            llm,
            root,
            "ChatCompletion",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-test",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": question,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": answer,
                "llm.token_count.prompt": 12,
                "llm.token_count.completion": 5,
            },
            start + 310,
            start + 890,
            kind=3,
        )
    )
    return spans


def genai_trace(n: int, question: str, answer: str, *, events=False, start=0) -> list[dict]:
    """invoke_workflow-less GenAI trace: a root with no input, a retrieval span, a chat span with messages."""
    t = tid(n)
    root, ret, chat = sid(n, 1), sid(n, 2), sid(n, 3)
    chat_attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m-req",
        "gen_ai.response.model": "m-resp",
        "gen_ai.usage.input_tokens": 7,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.conversation.id": "conv-1",
    }
    chat_events = ()
    if events:
        chat_events = (
            ("gen_ai.user.message", {"content": question}),
            ("gen_ai.choice", {"message": json.dumps({"role": "assistant", "content": answer})}),
        )
    else:
        chat_attrs["gen_ai.input.messages"] = json.dumps(
            [
                {"role": "system", "parts": [{"type": "text", "content": "be brief"}]},
                {"role": "user", "parts": [{"type": "text", "content": question}]},
            ]
        )
        chat_attrs["gen_ai.output.messages"] = json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]
        )
    return [
        span(t, root, None, "handle_request", {"http.route": "/v2/ask"}, start, start + 700, kind=2),
        span(
            t,
            ret,
            root,
            "retrieval vectors",
            {
                "gen_ai.operation.name": "retrieval",
                "gen_ai.retrieval.query.text": question,
                "gen_ai.retrieval.documents": json.dumps([{"id": "g1", "score": 0.7, "content": "genai doc"}]),
            },
            start + 5,
            start + 50,
        ),
        span(t, chat, root, "chat m-req", chat_attrs, start + 60, start + 690, events=chat_events, kind=3),
    ]


def dumps(payload: dict) -> str:
    return json.dumps(payload)


def imported_project(root: Path, config: str, requests: list[dict]) -> Path:
    """``root`` with ``config`` as its ragassay.toml and the OTLP ``requests`` imported into its results store
    (through ``traces.jsonl`` and :func:`ragassay.traces.import_paths`, as ``ragassay traces import`` does)."""
    from ragassay.store import open_store
    from ragassay.traces.ingest import import_paths

    root.mkdir(parents=True, exist_ok=True)
    (root / "ragassay.toml").write_text(config)
    (root / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    store = open_store(f"sqlite:///{root / 'ragassay-results.db'}")
    try:
        import_paths(store, [root / "traces.jsonl"])
    finally:
        store.close()
    return root


def store_rows(root: Path, sql: str) -> list:
    """The rows of ``sql`` on the project's results store."""
    con = sqlite3.connect(root / "ragassay-results.db")
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()
