"""One trajectory step from one span: the fields each convention records for an agent, a tool call, a model call
and a retrieval (or rerank), read from either convention, first found wins.

Specifications read (attribute names only; the values are read as the specifications type them):

* OpenTelemetry GenAI semantic conventions v1.41.0 (https://github.com/open-telemetry/semantic-conventions/blob/
  v1.41.0/docs/gen-ai/): ``gen-ai-agent-spans.md`` (invoke_agent: ``gen_ai.agent.name``, ``gen_ai.agent.id``),
  ``gen-ai-spans.md`` "Execute tool span" (``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``, ``error.type``; arguments and result are objects
  or JSON strings), "Inference" (``gen_ai.request.model``, ``gen_ai.response.model``, ``gen_ai.usage.input_tokens``,
  ``gen_ai.usage.output_tokens``, ``gen_ai.usage.cache_read.input_tokens``) and "Retrievals"
  (``gen_ai.retrieval.query.text``, ``gen_ai.retrieval.documents``: a JSON array of ``{"id", "score"}`` by
  ``gen-ai-retrieval-documents.json``); span status by the OpenTelemetry "Recording Errors" document.
* OpenInference semantic conventions (https://github.com/Arize-ai/openinference/blob/main/spec/
  semantic_conventions.md, as of openinference-semantic-conventions 0.1.32): ``agent.name``; ``tool.name``,
  ``tool.id``, ``tool.parameters``; ``input.value`` / ``output.value``; ``llm.model_name``,
  ``llm.token_count.{prompt,completion}``, ``llm.token_count.prompt_details.cache_read``;
  ``retrieval.documents.N.document.{id,score}``, ``reranker.output_documents.N.document.{id,score}``,
  ``reranker.query``; ``exception.type`` / ``exception.message`` (events named ``exception``).

A missing attribute leaves its field empty (None, "" or []), never an error.
"""

from __future__ import annotations

import json
from typing import Any

from ..models import Step
from .mapping import (
    COMPLETION_KEYS,
    PROMPT_KEYS,
    _indexed,
    _int,
    _json_list,
    _last_user_message,
    _model,
    _output_message,
)
from .model import TraceSpan

ERROR_CODE = "STATUS_CODE_ERROR"
CACHE_READ_KEYS = ("gen_ai.usage.cache_read.input_tokens", "llm.token_count.prompt_details.cache_read")


def base_fields(span: TraceSpan, kind: str, parent_id: str | None) -> dict[str, Any]:
    """The fields every step of a span has: id (the span id), parent, timing, error, provenance."""
    return {
        "id": span.span_id,
        "kind": kind,
        "parent_id": parent_id,
        "latency_s": span.latency_s if span.end_ns else None,
        "started_at": span.start_ns / 1e9 if span.start_ns else None,
        "error": span_error(span),
        "attributes": {"span_name": span.name, "span_kind": span.kind},
    }


def agent_step(span: TraceSpan, parent_id: str | None) -> Step:
    """``invoke_agent`` / AGENT: the agent's name (``gen_ai.agent.name``, ``agent.name``, else the span name), its
    input and output (``input.value`` / ``output.value``, else the span's messages)."""
    return Step(**agent_fields(span, parent_id))


def tool_step(span: TraceSpan, parent_id: str | None) -> Step:
    """``execute_tool`` / TOOL: name (else from the span name), call id, arguments (``gen_ai.tool.call.arguments``,
    else ``input.value``, else ``tool.parameters``, which several OpenInference instrumentations fill with the
    call's arguments; an object, else kept raw in ``attributes["arguments_raw"]``), result (JSON decoded), error."""
    return Step(**tool_fields(span, parent_id))


def model_step(span: TraceSpan, parent_id: str | None) -> Step:
    """chat / text_completion / generate_content / LLM: model, prompt (last user message), output, tokens."""
    return Step(**model_fields(span, parent_id))


def retrieval_step(span: TraceSpan, parent_id: str | None, document_prefixes: list[str]) -> Step:
    """retrieval / RETRIEVER / RERANKER: the query and the ranked ids with their scores. The conventions give one
    id per retrieved item (the document's), so it fills both ``context_ids`` and ``document_ids``; ``scores``
    only when every item has one, ids only when every item has one."""
    return Step(**retrieval_fields(span, parent_id, document_prefixes))


# The fields of each step as plain data (what the step functions above validate one by one, and
# :func:`ragassay.traces.spans_to_trajectory` together with the trajectory's other steps).


def agent_fields(span: TraceSpan, parent_id: str | None) -> dict[str, Any]:
    """The fields of :func:`agent_step`."""
    attrs = span.attributes
    fields = base_fields(span, "agent", parent_id)
    if attrs.get("gen_ai.agent.id"):
        fields["attributes"]["agent_id"] = str(attrs["gen_ai.agent.id"])
    fields["name"] = _first_string(attrs, "gen_ai.agent.name", "agent.name") or span.name
    fields["input"] = _string_or_none(attrs.get("input.value")) or _last_user_message(span) or None
    fields["output"] = _string_or_none(attrs.get("output.value")) or _output_message(span) or None
    return fields


def tool_fields(span: TraceSpan, parent_id: str | None) -> dict[str, Any]:
    """The fields of :func:`tool_step`."""
    attrs = span.attributes
    fields = base_fields(span, "tool_call", parent_id)
    raw = attrs.get("gen_ai.tool.call.arguments", attrs.get("input.value", attrs.get("tool.parameters")))
    arguments = _object(raw)
    if raw is not None and arguments is None:
        fields["attributes"]["arguments_raw"] = raw
    fields["name"] = _first_string(attrs, "gen_ai.tool.name", "tool.name") or _tool_from_span_name(span.name)
    fields["call_id"] = _first_string(attrs, "gen_ai.tool.call.id", "tool.id", "tool_call.id") or None
    fields["arguments"] = arguments
    fields["result"] = _decoded(attrs.get("gen_ai.tool.call.result", attrs.get("output.value")))
    return fields


def model_fields(span: TraceSpan, parent_id: str | None) -> dict[str, Any]:
    """The fields of :func:`model_step` (its usage as the fields of a :class:`~ragassay.TokenUsage`)."""
    attrs = span.attributes
    fields = base_fields(span, "model_call", parent_id)
    fields["name"] = _model(span)
    fields["input"] = _last_user_message(span) or None
    fields["output"] = _output_message(span) or None
    fields["usage"] = {
        "input_tokens": _int(attrs, *PROMPT_KEYS),
        "output_tokens": _int(attrs, *COMPLETION_KEYS),
        "cached_tokens": _int(attrs, *CACHE_READ_KEYS),
        "calls": 1,
    }
    return fields


def retrieval_fields(span: TraceSpan, parent_id: str | None, document_prefixes: list[str]) -> dict[str, Any]:
    """The fields of :func:`retrieval_step` (the list fields' values are its own once validated: a model's list
    fields are copies of the lists given)."""
    attrs = span.attributes
    documents = _documents(attrs, document_prefixes)
    fields = base_fields(span, "retrieval", parent_id)
    ids = [d[0] for d in documents]
    scores = [d[1] for d in documents]  # floats or None (_score)
    if documents and not all(ids):
        fields["attributes"]["documents_without_id"] = sum(1 for i in ids if not i)
        ids = []
    fields["name"] = span.name
    fields["query"] = _query(attrs)
    fields["context_ids"] = ids
    fields["document_ids"] = ids
    fields["scores"] = scores if documents and None not in scores else []
    return fields


def _tool_from_span_name(name: str) -> str:
    """The tool named by a span name: ``execute_tool {gen_ai.tool.name}`` (the GenAI span name) gives the tool,
    a bare ``execute_tool`` none, any other name (an OpenInference TOOL span's) is the tool's."""
    if name == "execute_tool" or name.startswith("execute_tool "):
        return name[len("execute_tool") :].strip()
    return name


def span_error(span: TraceSpan) -> str | None:
    """The error a span ended with: ``error.type`` and the status message (or the ``exception`` event's type and
    message), when the status is ERROR or ``error.type`` is set; None otherwise."""
    attrs = span.attributes
    if span.status.get("code") != ERROR_CODE and not attrs.get("error.type"):
        return None
    event = next((e.attributes for e in span.events if e.name == "exception"), {})
    kind = _first_string(attrs, "error.type", "exception.type") or _first_string(event, "exception.type")
    message = str(span.status.get("message") or "") or _first_string(event, "exception.message")
    parts = [p for p in (kind, message) if p]
    return ": ".join(dict.fromkeys(parts)) or "error"


def _documents(attrs: dict[str, Any], prefixes: list[str]) -> list[tuple[str, float | None]]:
    for prefix in prefixes:
        found = _indexed(attrs, prefix)
        if found:
            return [(_id(d.get("document.id")), _score(d.get("document.score"))) for d in found]
    genai = [d for d in _json_list(attrs.get("gen_ai.retrieval.documents")) if isinstance(d, dict)]
    return [(_id(d.get("id")), _score(d.get("score"))) for d in genai]


def _query(attrs: dict[str, Any]) -> str | None:
    for key in ("gen_ai.retrieval.query.text", "reranker.query", "input.value"):
        value = attrs.get(key)
        if isinstance(value, str) and value.strip():
            parsed = _decoded(value)
            if isinstance(parsed, dict):
                found = next((parsed[k] for k in ("query", "question", "input") if isinstance(parsed.get(k), str)), "")
                return found or value
            return value
    return None


def _id(value: Any) -> str:
    return "" if value is None or isinstance(value, bool) else str(value)


def _score(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _decoded(value: Any) -> Any:
    """A JSON string decoded (arguments and results MAY be recorded as JSON strings); anything else as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _object(value: Any) -> dict[str, Any] | None:
    decoded = _decoded(value)
    return decoded if isinstance(decoded, dict) else None


def _first_string(attrs: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = attrs.get(key)
        if value is not None and not isinstance(value, (dict, list)) and str(value).strip():
            return str(value)
    return ""


def _string_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
