"""Agent trajectories written by hand from the specifications, each with the trajectory it must import as.

* GenAI: OTLP JSON spans by the OpenTelemetry GenAI semantic conventions v1.41.0 (invoke_agent, execute_tool,
  chat, retrieval spans; a tool that fails with ``error.type`` and an ERROR status, a nested agent, a chat span and
  a tool span without any of their attributes, an embeddings, a create_agent and an unknown span);
* OpenInference: the same story with AGENT / TOOL / RETRIEVER / RERANKER / LLM spans (the error from an
  ``exception`` event, a nested agent without ``agent.name``, spans without attributes, CHAIN and GUARDRAIL);
* ATIF: an ATIF-v1.7 file (Harbor RFC 0001) with a system and a user step, a model turn with two tool calls (one
  failed), a deterministic dispatch (``llm_call_count`` 0) delegating to an embedded subagent and to a missing
  file, and a final answer in content parts.
"""

from __future__ import annotations

import json

from ragassay import Step, TokenUsage

from otlp_traces import T0, request, sid, span, tid

QUESTION = "What is the budget of Acme's first project?"
ANSWER = "Acme's first project has a budget of 5M."
ERROR = 2  # OTLP Status.StatusCode STATUS_CODE_ERROR


def when(start: int, end: int) -> dict:
    """started_at and latency_s of a span written at ``start``..``end`` ms after T0 (as the store computes them)."""
    return {"started_at": (T0 + start * 1_000_000) / 1e9, "latency_s": ((end - start) * 1_000_000) / 1e9}


def _failed(out: dict, message: str) -> dict:
    out["status"] = {"code": ERROR, "message": message}
    return out


def _messages(role: str, *parts: dict) -> str:
    return json.dumps([{"role": role, "parts": list(parts)}])


# --- OpenTelemetry GenAI ------------------------------------------------------------------------------------------

GENAI_N = 41


def genai_request() -> dict:
    """One trace: agent 'planner' > chat > execute_tool > agent 'researcher' (retrieval, failing tool, bare chat)
    > embeddings, bare execute_tool, unknown span > final chat; plus a create_agent span."""
    t, s = tid(GENAI_N), (lambda k: sid(GENAI_N, k))
    return request(
        [
            span(t, s(1), None, "invoke_agent planner", {
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner", "gen_ai.agent.id": "asst_1",
                "gen_ai.input.messages": _messages("user", {"type": "text", "content": QUESTION}),
            }, 0, 1000),
            span(t, s(2), s(1), "create_agent planner", {"gen_ai.operation.name": "create_agent"}, 1, 2),
            span(t, s(3), s(1), "chat m-1", {
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "m-1", "gen_ai.response.model": "m-1-2025",
                "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 8,
                "gen_ai.usage.cache_read.input_tokens": 5,
                "gen_ai.input.messages": _messages("user", {"type": "text", "content": QUESTION}),
                "gen_ai.output.messages": _messages(
                    "assistant", {"type": "tool_call", "id": "call_1", "name": "search_projects"}
                ),
            }, 10, 100, kind=3),
            span(t, s(4), s(1), "execute_tool search_projects", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_projects",
                "gen_ai.tool.call.id": "call_1", "gen_ai.tool.type": "function",
                "gen_ai.tool.call.arguments": '{"client": "Acme"}',
                "gen_ai.tool.call.result": '{"projects": ["p1", "p2"]}',
            }, 110, 200),
            span(t, s(5), s(1), "invoke_agent researcher", {
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher",
            }, 210, 700),
            span(t, s(6), s(5), "retrieval budgets", {
                "gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "Acme p1 budget",
                "gen_ai.retrieval.documents": json.dumps([{"id": "doc-7", "score": 0.91}, {"id": "doc-3", "score": 0.42}]),
            }, 220, 300, kind=3),
            _failed(span(t, s(7), s(5), "execute_tool fetch_budget", {
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fetch_budget",
                "gen_ai.tool.call.id": "call_2", "gen_ai.tool.call.arguments": {"project": "p1"},
                "error.type": "timeout",
            }, 310, 400), "budget service timed out"),
            span(t, s(8), s(5), "chat", {"gen_ai.operation.name": "chat"}, 410, 690, kind=3),
            span(t, s(9), s(1), "embeddings e-1", {"gen_ai.operation.name": "embeddings"}, 702, 704),
            span(t, s(10), s(1), "execute_tool", {"gen_ai.operation.name": "execute_tool"}, 705, 720),
            span(t, s(11), s(1), "db.query", {"db.system": "postgresql"}, 715, 718),
            span(t, s(12), s(1), "chat m-1", {
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "m-1",
                "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 12,
                "gen_ai.output.messages": _messages("assistant", {"type": "text", "content": ANSWER}),
            }, 730, 990, kind=3),
        ]
    )  # fmt: skip


def genai_expected() -> list[Step]:
    s = lambda k: sid(GENAI_N, k)  # noqa: E731
    root = s(1)
    return [
        Step(id=root, kind="agent", name="planner", input=QUESTION, **when(0, 1000),
             attributes={"span_name": "invoke_agent planner", "span_kind": "AGENT", "agent_id": "asst_1"}),
        Step(id=s(3), kind="model_call", parent_id=root, name="m-1-2025", input=QUESTION, **when(10, 100),
             usage=TokenUsage(input_tokens=20, output_tokens=8, cached_tokens=5, calls=1),
             attributes={"span_name": "chat m-1", "span_kind": "LLM"}),
        Step(id=s(4), kind="tool_call", parent_id=root, name="search_projects", call_id="call_1",
             arguments={"client": "Acme"}, result={"projects": ["p1", "p2"]}, **when(110, 200),
             attributes={"span_name": "execute_tool search_projects", "span_kind": "TOOL"}),
        Step(id=s(5), kind="agent", parent_id=root, name="researcher", **when(210, 700),
             attributes={"span_name": "invoke_agent researcher", "span_kind": "AGENT"}),
        Step(id=s(6), kind="retrieval", parent_id=s(5), name="retrieval budgets", query="Acme p1 budget",
             context_ids=["doc-7", "doc-3"], document_ids=["doc-7", "doc-3"], scores=[0.91, 0.42], **when(220, 300),
             attributes={"span_name": "retrieval budgets", "span_kind": "RETRIEVER"}),
        Step(id=s(7), kind="tool_call", parent_id=s(5), name="fetch_budget", call_id="call_2",
             arguments={"project": "p1"}, error="timeout: budget service timed out", **when(310, 400),
             attributes={"span_name": "execute_tool fetch_budget", "span_kind": "TOOL"}),
        Step(id=s(8), kind="model_call", parent_id=s(5), name="", usage=TokenUsage(calls=1), **when(410, 690),
             attributes={"span_name": "chat", "span_kind": "LLM"}),
        Step(id=s(10), kind="tool_call", parent_id=root, name="", **when(705, 720),
             attributes={"span_name": "execute_tool", "span_kind": "TOOL"}),
        Step(id=s(12), kind="model_call", parent_id=root, name="m-1", output=ANSWER, **when(730, 990),
             usage=TokenUsage(input_tokens=50, output_tokens=12, calls=1),
             attributes={"span_name": "chat m-1", "span_kind": "LLM"}),
        Step(id="answer", kind="answer", output=ANSWER),
    ]  # fmt: skip


GENAI_SKIPPED = {"": 1, "EMBEDDING": 1, "create_agent": 1}


# --- OpenInference ------------------------------------------------------------------------------------------------

OI_N = 42


def openinference_request() -> dict:
    """One trace: AGENT 'supervisor' > LLM > TOOL > AGENT (RETRIEVER, RERANKER, failing TOOL, bare LLM) > bare TOOL
    > CHAIN > GUARDRAIL > LLM."""
    t, s = tid(OI_N), (lambda k: sid(OI_N, k))
    kind = "openinference.span.kind"
    return request(
        [
            span(t, s(1), None, "supervisor", {
                kind: "AGENT", "agent.name": "supervisor", "input.value": QUESTION, "output.value": ANSWER,
            }, 0, 1000),
            span(t, s(2), s(1), "ChatCompletion", {
                kind: "LLM", "llm.model_name": "gpt-x", "llm.token_count.prompt": 30,
                "llm.token_count.completion": 6, "llm.token_count.prompt_details.cache_read": 10,
                "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": QUESTION,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_a",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "lookup_client",
            }, 10, 90, kind=3),
            span(t, s(3), s(1), "lookup_client", {
                kind: "TOOL", "tool.name": "lookup_client", "tool.id": "call_a",
                "input.value": '{"name": "Acme"}', "output.value": '{"client_id": 7}',
            }, 100, 180),
            span(t, s(4), s(1), "research_agent", {
                kind: "AGENT", "input.value": "Acme budget", "output.value": "Budget is 5M",
            }, 190, 600),
            span(t, s(5), s(4), "retrieve", {
                kind: "RETRIEVER", "input.value": "Acme budget",
                "retrieval.documents.0.document.id": "d1", "retrieval.documents.0.document.score": 0.8,
                "retrieval.documents.0.document.content": "Acme was founded ...",
                "retrieval.documents.1.document.id": "d2", "retrieval.documents.1.document.score": 0.3,
                "retrieval.documents.1.document.content": "Acme's budget is 5M",
            }, 200, 260),
            span(t, s(6), s(4), "rerank", {
                kind: "RERANKER", "reranker.query": "Acme budget",
                "reranker.output_documents.0.document.id": "d2", "reranker.output_documents.0.document.score": 3.1,
            }, 270, 300),
            _failed(span(t, s(7), s(4), "fetch_budget", {
                kind: "TOOL", "tool.name": "fetch_budget", "tool.parameters": '{"client_id": 7}',
            }, 310, 400, events=[("exception", {
                "exception.type": "ServiceUnavailable", "exception.message": "HTTP 503",
            })]), "HTTP 503"),
            span(t, s(8), s(4), "ChatCompletion", {kind: "LLM"}, 410, 590, kind=3),
            span(t, s(9), s(1), "calculator", {kind: "TOOL", "input.value": "2+2", "output.value": "4"}, 610, 640),
            span(t, s(10), s(1), "format", {kind: "CHAIN"}, 650, 660),
            span(t, s(11), s(1), "guard", {kind: "GUARDRAIL"}, 665, 670),
            span(t, s(12), s(1), "ChatCompletion", {
                kind: "LLM", "llm.model_name": "gpt-x", "llm.token_count.prompt": 80,
                "llm.token_count.completion": 20, "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": ANSWER,
            }, 700, 990, kind=3),
        ]
    )  # fmt: skip


def openinference_expected() -> list[Step]:
    s = lambda k: sid(OI_N, k)  # noqa: E731
    root = s(1)
    return [
        Step(id=root, kind="agent", name="supervisor", input=QUESTION, output=ANSWER, **when(0, 1000),
             attributes={"span_name": "supervisor", "span_kind": "AGENT"}),
        Step(id=s(2), kind="model_call", parent_id=root, name="gpt-x", input=QUESTION, **when(10, 90),
             usage=TokenUsage(input_tokens=30, output_tokens=6, cached_tokens=10, calls=1),
             attributes={"span_name": "ChatCompletion", "span_kind": "LLM"}),
        Step(id=s(3), kind="tool_call", parent_id=root, name="lookup_client", call_id="call_a",
             arguments={"name": "Acme"}, result={"client_id": 7}, **when(100, 180),
             attributes={"span_name": "lookup_client", "span_kind": "TOOL"}),
        Step(id=s(4), kind="agent", parent_id=root, name="research_agent", input="Acme budget",
             output="Budget is 5M", **when(190, 600), attributes={"span_name": "research_agent", "span_kind": "AGENT"}),
        Step(id=s(5), kind="retrieval", parent_id=s(4), name="retrieve", query="Acme budget",
             context_ids=["d1", "d2"], document_ids=["d1", "d2"], scores=[0.8, 0.3], **when(200, 260),
             attributes={"span_name": "retrieve", "span_kind": "RETRIEVER"}),
        Step(id=s(6), kind="retrieval", parent_id=s(4), name="rerank", query="Acme budget",
             context_ids=["d2"], document_ids=["d2"], scores=[3.1], **when(270, 300),
             attributes={"span_name": "rerank", "span_kind": "RERANKER"}),
        Step(id=s(7), kind="tool_call", parent_id=s(4), name="fetch_budget", arguments={"client_id": 7},
             error="ServiceUnavailable: HTTP 503", **when(310, 400),
             attributes={"span_name": "fetch_budget", "span_kind": "TOOL"}),
        Step(id=s(8), kind="model_call", parent_id=s(4), name="", usage=TokenUsage(calls=1), **when(410, 590),
             attributes={"span_name": "ChatCompletion", "span_kind": "LLM"}),
        Step(id=s(9), kind="tool_call", parent_id=root, name="calculator", result="4", **when(610, 640),
             attributes={"span_name": "calculator", "span_kind": "TOOL", "arguments_raw": "2+2"}),
        Step(id=s(12), kind="model_call", parent_id=root, name="gpt-x", output=ANSWER, **when(700, 990),
             usage=TokenUsage(input_tokens=80, output_tokens=20, calls=1),
             attributes={"span_name": "ChatCompletion", "span_kind": "LLM"}),
        Step(id="answer", kind="answer", output=ANSWER),
    ]  # fmt: skip


OPENINFERENCE_SKIPPED = {"CHAIN": 1, "GUARDRAIL": 1}


# --- ATIF ---------------------------------------------------------------------------------------------------------

ATIF_T0 = 1_760_178_600.0  # 2025-10-11T10:30:00Z


def atif_document(session_id: str = "run-1", question: str = QUESTION) -> dict:
    """An ATIF-v1.7 trajectory (Harbor RFC 0001) with an embedded subagent and a reference to a missing file."""
    return {
        "schema_version": "ATIF-v1.7",
        "session_id": session_id,
        "trajectory_id": f"{session_id}-main",
        "agent": {"name": "harbor-agent", "version": "1.0.0", "model_name": "gemini-x"},
        "steps": [
            {"step_id": 1, "source": "system", "message": "You answer questions about clients."},
            {"step_id": 2, "source": "user", "message": question, "timestamp": "2025-10-11T10:30:00Z"},
            {
                "step_id": 3, "source": "agent", "timestamp": "2025-10-11T10:30:02Z", "model_name": "gemini-x",
                "message": "I will look up the client.", "reasoning_content": "Need the client first.",
                "tool_calls": [
                    {"tool_call_id": "call_1", "function_name": "lookup_client", "arguments": {"name": "Acme"}},
                    {"tool_call_id": "call_2", "function_name": "fetch_budget", "arguments": {"client_id": 7}},
                ],
                "observation": {"results": [
                    {"source_call_id": "call_1", "content": '{"client_id": 7}'},
                    {"source_call_id": "call_2", "content": "HTTP 503", "extra": {"is_error": True}},
                ]},
                "metrics": {"prompt_tokens": 120, "completion_tokens": 30, "cached_tokens": 20, "cost_usd": 0.001},
            },
            {
                "step_id": 4, "source": "agent", "timestamp": "2025-10-11T10:30:03Z", "message": "",
                "llm_call_count": 0,
                "tool_calls": [
                    {"tool_call_id": "call_3", "function_name": "delegate_research",
                     "arguments": {"topic": "Acme budget"}},
                ],
                "observation": {"results": [
                    {"source_call_id": "call_3",
                     "subagent_trajectory_ref": [{"trajectory_id": "research-1", "session_id": session_id}]},
                    {"subagent_trajectory_ref": [{"trajectory_path": "missing.json"}]},
                ]},
            },
            {
                "step_id": 5, "source": "agent", "timestamp": "2025-10-11T10:30:09Z",
                "message": [{"type": "text", "text": ANSWER}],
                "metrics": {"prompt_tokens": 200, "completion_tokens": 15},
            },
        ],
        "subagent_trajectories": [
            {
                "schema_version": "ATIF-v1.7", "trajectory_id": "research-1",
                "agent": {"name": "researcher", "version": "1", "model_name": "small-m"},
                "steps": [
                    {"step_id": 1, "source": "user", "message": "Acme budget"},
                    {
                        "step_id": 2, "source": "agent", "message": "Budget is 5M",
                        "tool_calls": [{"tool_call_id": "c1", "function_name": "search",
                                        "arguments": {"q": "Acme budget"}}],
                        "observation": {"results": [{"source_call_id": "c1", "content": "doc-3: Acme 5M"}]},
                        "metrics": {"prompt_tokens": 40, "completion_tokens": 5},
                    },
                ],
            }
        ],
    }  # fmt: skip


def atif_expected(session_id: str = "run-1") -> list[Step]:
    at = lambda seconds: ATIF_T0 + seconds  # noqa: E731
    unresolved = "subagent trajectory missing.json not found (not embedded, no such file)"
    return [
        Step(id="3", kind="model_call", name="gemini-x", output="I will look up the client.", started_at=at(2),
             usage=TokenUsage(input_tokens=120, output_tokens=30, cached_tokens=20, calls=1),
             attributes={"atif_step_id": 3, "reasoning_content": "Need the client first.", "cost_usd": 0.001}),
        Step(id="3.1", kind="tool_call", name="lookup_client", call_id="call_1", arguments={"name": "Acme"},
             result='{"client_id": 7}', started_at=at(2)),
        Step(id="3.2", kind="tool_call", name="fetch_budget", call_id="call_2", arguments={"client_id": 7},
             error="HTTP 503", started_at=at(2), attributes={"extra": {"is_error": True}}),
        Step(id="4.1", kind="tool_call", name="delegate_research", call_id="call_3",
             arguments={"topic": "Acme budget"}, started_at=at(3)),
        Step(id="4.a1", kind="agent", name="researcher", output="Budget is 5M", started_at=at(3),
             attributes={"trajectory_id": "research-1", "session_id": session_id}),
        Step(id="4.a1/2", kind="model_call", parent_id="4.a1", name="small-m", output="Budget is 5M",
             usage=TokenUsage(input_tokens=40, output_tokens=5, calls=1), attributes={"atif_step_id": 2}),
        Step(id="4.a1/2.1", kind="tool_call", parent_id="4.a1", name="search", call_id="c1",
             arguments={"q": "Acme budget"}, result="doc-3: Acme 5M"),
        Step(id="4.a2", kind="agent", name="", started_at=at(3),
             attributes={"trajectory_path": "missing.json", "unresolved": unresolved}),
        Step(id="5", kind="model_call", name="gemini-x", output=ANSWER, started_at=at(9),
             usage=TokenUsage(input_tokens=200, output_tokens=15, calls=1), attributes={"atif_step_id": 5}),
        Step(id="answer", kind="answer", output=ANSWER),
    ]  # fmt: skip


ATIF_SKIPPED = {"system": 1, "user": 2}
