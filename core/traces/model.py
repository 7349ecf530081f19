"""The stored form of a trace (:class:`SpanRecord`, what ingestion keeps) and its mapped form (:class:`Trace`: one
question, one answer, the contexts, the span tree), as :func:`ragassay.traces.read_traces` yields it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class SpanEvent(BaseModel):
    """One event of a span (OTLP ``Span.Event``)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Event name, e.g. 'gen_ai.choice'.")
    time_ns: int = Field(default=0, description="Event time, nanoseconds since the Unix epoch.")
    attributes: dict[str, Any] = Field(default_factory=dict, description="Event attributes, decoded from AnyValue.")


class TraceSpan(BaseModel):
    """One span as stored: ids in lowercase hex, every attribute kept (unknown ones included)."""

    model_config = ConfigDict(extra="forbid")

    span_id: str = Field(description="16 hex characters.")
    parent_span_id: str | None = Field(default=None, description="16 hex characters; None for a root span.")
    name: str = Field(description="Span name.")
    kind: str = Field(default="", description="Mapped kind: CHAIN, RETRIEVER, RERANKER, LLM, EMBEDDING, TOOL, AGENT.")
    otel_kind: str = Field(default="", description="OTLP SpanKind, e.g. SPAN_KIND_CLIENT.")
    start_ns: int = Field(default=0, description="Start time, nanoseconds since the Unix epoch.")
    end_ns: int = Field(default=0, description="End time, nanoseconds since the Unix epoch.")
    status: dict[str, Any] = Field(default_factory=dict, description="OTLP status: code and message.")
    scope: dict[str, str] = Field(default_factory=dict, description="Instrumentation scope: name and version.")
    attributes: dict[str, Any] = Field(default_factory=dict, description="Span attributes, decoded from AnyValue.")
    events: list[SpanEvent] = Field(default_factory=list, description="Span events in order.")

    @property
    def latency_s(self) -> float:
        """Duration in seconds (0 when the end precedes the start)."""
        return max(0, self.end_ns - self.start_ns) / 1e9


class TraceContext(BaseModel):
    """One retrieved context of a trace's last retriever or reranker span."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Document id ('' when the span gave none).")
    text: str = Field(description="Document content.")
    score: float | None = Field(default=None, description="Retrieval or rerank score; None when not given.")


class TraceTokens(BaseModel):
    """Tokens of the trace's model calls, summed over its LLM spans."""

    model_config = ConfigDict(extra="forbid")

    prompt: int = Field(default=0, description="Prompt (input) tokens.")
    completion: int = Field(default=0, description="Completion (output) tokens.")


class Trace(BaseModel):
    """One stored trace mapped to what an evaluation needs (see :class:`ragassay.traces.TraceMapping`)."""

    model_config = ConfigDict(extra="forbid")

    trace_id: str = Field(description="32 hex characters.")
    root_span_id: str = Field(description="16 hex characters: the span without a parent.")
    answer_span_id: str = Field(description="The span that produced the answer: the last LLM span, else the root.")
    start_ns: int = Field(description="Start of the root span, nanoseconds since the Unix epoch (UTC).")
    end_ns: int = Field(description="End of the root span.")
    service_name: str = Field(default="", description="Resource attribute service.name.")
    service_version: str = Field(default="", description="The version attribute (default service.version).")
    session_id: str = Field(default="", description="session.id (OpenInference) or gen_ai.conversation.id.")
    question: str = Field(description="The user's question: the root span's input.")
    answer: str = Field(description="The answer: the root span's output, else the last LLM span's.")
    contexts: list[TraceContext] = Field(default_factory=list, description="From the last retriever/reranker span.")
    model: str = Field(default="", description="Model of the answer span.")
    tokens: TraceTokens = Field(default_factory=TraceTokens, description="Summed over LLM spans.")
    spans: list[TraceSpan] = Field(default_factory=list, description="Every span, by start time.")
    resource_attributes: dict[str, Any] = Field(default_factory=dict, description="Resource of the root span.")

    @property
    def latency_s(self) -> float:
        """Duration of the root span in seconds."""
        return max(0, self.end_ns - self.start_ns) / 1e9

    def ids(self) -> dict[str, Any]:
        """The ids and provenance a sample's ``metadata['trace']`` and an output's trace carry."""
        return {
            "trace_id": self.trace_id,
            "span_id": self.root_span_id,
            "answer_span_id": self.answer_span_id,
            "start_ns": self.start_ns,
            "service_name": self.service_name,
            "service_version": self.service_version,
            "session_id": self.session_id,
        }


class Unmapped(BaseModel):
    """A stored trace that could not be mapped, with the reason (counted and listed, never skipped silently)."""

    model_config = ConfigDict(extra="forbid")

    trace_id: str
    reason: str
