"""Mapping the spans of one trace onto one question, one answer and its contexts.

Two conventions are read, OpenInference and the OpenTelemetry GenAI semantic conventions:

* span kind: ``openinference.span.kind`` (CHAIN, RETRIEVER, RERANKER, LLM, EMBEDDING, TOOL, AGENT), else
  ``gen_ai.operation.name`` (chat, text_completion, generate_content -> LLM; embeddings -> EMBEDDING;
  execute_tool -> TOOL; invoke_agent, create_agent -> AGENT; retrieval -> RETRIEVER), else
  :attr:`TraceMapping.span_kinds` by span name;
* question: the root span's input (``input.value``; a JSON input gives its question/query/input key or its
  last user message), else the root span's last user message (``gen_ai.input.messages`` of an ``invoke_agent`` or
  workflow span), else the query of the first retrieval span (``gen_ai.retrieval.query.text``, where the GenAI
  conventions put it), else the last user message of the first LLM span (``llm.input_messages.N.message.*``,
  ``gen_ai.input.messages``, ``gen_ai.prompt``, or the GenAI events ``gen_ai.user.message``,
  ``gen_ai.content.prompt``, ``gen_ai.client.inference.operation.details``, as span events or as OTLP log
  records: :mod:`ragassay.traces.storage` folds those into their span's events);
* answer: the root span's output (``output.value``), else the last LLM span's output message;
* contexts: the documents of the last retriever or reranker span (``retrieval.documents.N.document.{id,content,
  score}``, ``reranker.output_documents.N.document.*``, ``gen_ai.retrieval.documents``);
* tokens: ``llm.token_count.{prompt,completion}`` or ``gen_ai.usage.{input,output}_tokens`` summed over LLM spans;
  model: ``llm.model_name``, ``gen_ai.response.model`` or ``gen_ai.request.model`` of the answer span;
  session: ``session.id`` or ``gen_ai.conversation.id``.

Specifications: OpenInference semantic conventions (https://github.com/Arize-ai/openinference/blob/main/spec/
semantic_conventions.md) and OpenTelemetry GenAI semantic conventions (https://opentelemetry.io/docs/specs/
semconv/gen-ai/gen-ai-spans/).
"""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .model import Trace, TraceSpan

KINDS = ("CHAIN", "RETRIEVER", "RERANKER", "LLM", "EMBEDDING", "TOOL", "AGENT")
GENAI_KINDS = {
    "chat": "LLM",
    "text_completion": "LLM",
    "generate_content": "LLM",
    "embeddings": "EMBEDDING",
    "execute_tool": "TOOL",
    "invoke_agent": "AGENT",
    "create_agent": "AGENT",
    "invoke_workflow": "CHAIN",
    "retrieval": "RETRIEVER",
}
RETRIEVAL_QUERY = "gen_ai.retrieval.query.text"
#: Where a model call's prompt and completion token counts are, first found wins.
PROMPT_KEYS = ("llm.token_count.prompt", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
COMPLETION_KEYS = ("llm.token_count.completion", "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
#: Keys read when a model call's ``output.value`` is a JSON object.
OUTPUT_JSON_KEYS = ("content", "answer", "output")
_INDEXED = re.compile(r"^(?P<prefix>.+)\.(?P<index>\d+)\.(?P<field>.+)$")


class TraceMapping(BaseModel):
    """How spans map onto a question, an answer and contexts; the defaults read OpenInference and the GenAI
    semantic conventions. A team with its own span names or attribute keys sets them here."""

    model_config = ConfigDict(extra="forbid")

    question_keys: list[str] = Field(
        default_factory=lambda: ["input.value", "gen_ai.retrieval.query.text"],
        description="Attributes of the root span holding the question, first found wins.",
    )
    answer_keys: list[str] = Field(
        default_factory=lambda: ["output.value"], description="Attributes of the root span holding the answer."
    )
    json_question_keys: list[str] = Field(
        default_factory=lambda: ["question", "query", "input", "q"],
        description="Keys read when the question attribute holds a JSON object.",
    )
    json_answer_keys: list[str] = Field(
        default_factory=lambda: ["answer", "output", "response", "content"],
        description="Keys read when the answer attribute holds a JSON object.",
    )
    document_prefixes: list[str] = Field(
        default_factory=lambda: ["reranker.output_documents", "retrieval.documents"],
        description="Indexed attribute prefixes of retrieved documents (PREFIX.N.document.{id,content,score}).",
    )
    span_kinds: dict[str, str] = Field(
        default_factory=dict,
        description="Span name -> kind (CHAIN, RETRIEVER, RERANKER, LLM, EMBEDDING, TOOL, AGENT) for spans "
        "that carry neither openinference.span.kind nor gen_ai.operation.name.",
    )
    version_attribute: str = Field(
        "service.version",
        description="Resource (or root span) attribute naming the deployed version; versions become systems.",
    )
    session_keys: list[str] = Field(
        default_factory=lambda: ["session.id", "gen_ai.conversation.id"], description="Attributes of the session id."
    )


def dataset_mapping(source: str, options: Any, where: str = "dataset.options.mapping") -> TraceMapping:
    """The ``mapping`` a ``[dataset]`` section sets for its ``traces`` source (``source`` and ``options`` as
    configured); the standard mapping when the source is another one or sets none. An invalid mapping is a
    :class:`~ragassay.ConfigError` naming ``where`` and each wrong key."""
    from pydantic import ValidationError

    from ..errors import ConfigError

    if source != "traces" or "mapping" not in (options or {}):
        return TraceMapping()
    try:
        return TraceMapping.model_validate(options["mapping"])
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'mapping'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{where}: {problems}") from None


class MappingFailure(Exception):
    """A trace that cannot be mapped; the message is the reason."""


def span_kind(span: TraceSpan, mapping: TraceMapping) -> str:
    """The kind of a span by the conventions, then the mapping's span names; '' when unknown."""
    attributes = span.attributes
    kind = attributes.get("openinference.span.kind")
    if isinstance(kind, str):
        kind = kind.upper()
        if kind in KINDS:
            return kind
    operation = attributes.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation in GENAI_KINDS:
        return GENAI_KINDS[operation]
    return mapping.span_kinds.get(span.name, "").upper()


def find_root(spans: list[TraceSpan]) -> TraceSpan:
    """The span without a parent (the earliest if several); a trace whose root has not arrived is unmappable."""
    roots = [s for s in spans if not s.parent_span_id]
    if roots:
        return min(roots, key=lambda s: (s.start_ns, s.span_id))
    ids = {s.span_id for s in spans}
    orphans = sorted({s.parent_span_id for s in spans if s.parent_span_id not in ids})
    if orphans:
        raise MappingFailure(f"no root span: parent span {orphans[0]} was not received")
    raise MappingFailure("no root span: the spans' parents form a cycle")


def map_trace(
    trace_id: str, spans: list[TraceSpan], resources: dict[str, dict[str, Any]], mapping: TraceMapping
) -> Trace:
    """One :class:`Trace` from its spans (any order) and each span's resource attributes; the given spans are
    left as they are (the trace holds copies with their mapped kind)."""
    return map_own_spans(trace_id, [s.model_copy() for s in spans], resources, mapping)


def map_own_spans(
    trace_id: str, spans: list[TraceSpan], resources: dict[str, dict[str, Any]], mapping: TraceMapping
) -> Trace:
    """:func:`map_trace` for spans the caller hands over (just read from the store): their ``kind`` is set in
    place and the trace holds them, without a copy."""
    if not spans:
        raise MappingFailure("no spans")
    for span in spans:
        span.kind = span_kind(span, mapping)
    spans = sorted(spans, key=_order)
    root = find_root(spans)
    llms = [s for s in spans if s.kind == "LLM"]
    question = _question(root, spans, llms, mapping)
    if not question:
        raise MappingFailure(
            f"no question: the root span '{root.name}' has none of {', '.join(mapping.question_keys)} nor a user "
            "message, no retrieval span has a query and no LLM span has a user message (set mapping.question_keys)"
        )
    answer_span = llms[-1] if llms else root
    answer = _text(root, mapping.answer_keys, mapping.json_answer_keys) or (_output_message(llms[-1]) if llms else "")
    if not answer:
        raise MappingFailure(
            f"no answer: the root span '{root.name}' has none of {', '.join(mapping.answer_keys)} and no LLM span "
            "has an output message (set mapping.answer_keys)"
        )
    resource = resources.get(root.span_id) or next(iter(resources.values()), {})
    version = resource.get(mapping.version_attribute, root.attributes.get(mapping.version_attribute))
    return Trace(  # the contexts and tokens given as their fields: validated with the trace
        trace_id=trace_id,
        root_span_id=root.span_id,
        answer_span_id=answer_span.span_id,
        start_ns=root.start_ns,
        end_ns=root.end_ns,
        service_name=str(resource.get("service.name", "")),
        service_version="" if version is None else str(version),
        session_id=_session(root, spans, mapping.session_keys),
        question=question,
        answer=answer,
        contexts=_contexts(spans, mapping),
        model=_model(answer_span),
        tokens=_tokens(llms),
        spans=spans,
        resource_attributes=resource,
    )


def _question(root: TraceSpan, spans: list[TraceSpan], llms: list[TraceSpan], mapping: TraceMapping) -> str:
    """The question by the module docstring's order: root input, root user message, retrieval query, LLM prompt."""
    found = _text(root, mapping.question_keys, mapping.json_question_keys) or _last_user_message(root)
    for span in spans if not found else ():
        query = span.attributes.get(RETRIEVAL_QUERY) if span.kind == "RETRIEVER" else None
        if isinstance(query, str) and query.strip():
            return query.strip()
    return found or (_last_user_message(llms[0]) if llms else "")


#: The order of spans: (start, end, span id).
_order = operator.attrgetter("start_ns", "end_ns", "span_id")


def _session(root: TraceSpan, spans: list[TraceSpan], keys: list[str]) -> str:
    """The session id: the first of ``keys`` the root span has, else any span (in order)."""
    for span in (root, *spans):
        attributes = span.attributes
        for key in keys:
            if key in attributes:
                value = attributes[key]
                return "" if value is None else str(value)
    return ""


def _text(span: TraceSpan, keys: list[str], json_keys: list[str]) -> str:
    """The first non-empty attribute of ``keys``; a JSON object gives its first ``json_keys`` or last user message."""
    for key in keys:
        value = span.attributes.get(key)
        if isinstance(value, str) and value.strip():
            return _from_json(value, json_keys)
    return ""


def _from_json(value: str, json_keys: Sequence[str]) -> str:
    text = value.strip()
    if not text.startswith(("{", "[")):
        return text
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    if isinstance(parsed, dict):
        for key in json_keys:
            if isinstance(parsed.get(key), str) and parsed[key].strip():
                return parsed[key].strip()
        if isinstance(parsed.get("messages"), list):
            return _last_of(parsed["messages"], "user") or text
    if isinstance(parsed, list):
        return _last_of(parsed, "user") or text
    return text


def _content(message: Any) -> str:
    """Text of a message: ``content`` (a string or parts) or GenAI ``parts`` of type text."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content", message.get("message.content"))
    parts = message.get("parts") if content is None else content
    if isinstance(parts, str):
        return parts.strip()
    if isinstance(parts, list):
        texts = [p.get("content") or p.get("text") or "" for p in parts if isinstance(p, dict)]
        return "\n".join(t for t in texts if isinstance(t, str) and t).strip()
    if isinstance(message.get("message"), dict):
        return _content(message["message"])
    return ""


def _last_of(messages: list[Any], role: str | None) -> str:
    for message in reversed(messages):
        found = _content(message)
        if found and (role is None or _role(message) in (role, "")):
            return found
    return ""


def _role(message: dict) -> str:
    return str(message.get("role", message.get("message.role", "")))


def _indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``PREFIX.N.rest`` attributes as a list of dicts (``rest`` -> value), by N."""
    items = _indexed_keys(tuple(attributes)).get(prefix)
    return [] if items is None else [{field: attributes[key] for field, key in item} for item in items]


@functools.lru_cache(maxsize=1024)
def _indexed_keys(keys: tuple[str, ...]) -> dict[str, tuple[tuple[tuple[str, str], ...], ...]]:
    """PREFIX -> the ``PREFIX.N.rest`` keys among ``keys`` as (rest, key) pairs, one tuple per N (by N; the keys in
    their order). Spans of one kind carry the same keys trace after trace: a set of keys is parsed once while it
    recurs (the cache is bounded)."""
    found: dict[str, dict[int, list[tuple[str, str]]]] = {}
    for key in keys:
        match = _INDEXED.match(key)
        if match:
            found.setdefault(match["prefix"], {}).setdefault(int(match["index"]), []).append((match["field"], key))
    return {prefix: tuple(tuple(items[i]) for i in sorted(items)) for prefix, items in found.items()}


def _json_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return []
        return parsed if isinstance(parsed, list) else [parsed]
    return []


#: Per direction: the OpenInference prefix, the GenAI attribute, the legacy attribute and role, the GenAI events.
_DIRECTIONS = {
    "input": (
        "llm.input_messages",
        "gen_ai.input.messages",
        ("gen_ai.prompt", "user"),
        ("gen_ai.user.message", "gen_ai.system.message", "gen_ai.content.prompt"),
    ),
    "output": (
        "llm.output_messages",
        "gen_ai.output.messages",
        ("gen_ai.completion", "assistant"),
        ("gen_ai.choice", "gen_ai.assistant.message", "gen_ai.content.completion"),
    ),
}
_EVENT_ROLES = {"gen_ai.user.message": "user", "gen_ai.system.message": "system"}


def _messages(span: TraceSpan, direction: str) -> list[Any]:
    """Input or output messages of an LLM span by either convention (attributes first, then events)."""
    attrs = span.attributes
    prefix, key, (legacy_key, role), _ = _DIRECTIONS[direction]
    oi = _indexed(attrs, prefix)
    if oi:
        return oi
    genai = _json_list(attrs.get(key))
    if genai:
        return genai
    legacy = attrs.get(legacy_key)
    if legacy is not None:
        return _json_list(legacy) or [{"role": role, "content": legacy}]
    return _event_messages(span, direction)


def _event_messages(span: TraceSpan, direction: str) -> list[Any]:
    messages: list[Any] = []
    _, key, _, names = _DIRECTIONS[direction]
    for event in span.events:
        attrs = event.attributes
        if event.name == "gen_ai.client.inference.operation.details":
            messages += _json_list(attrs.get(key))
        elif event.name in names:
            role = _EVENT_ROLES.get(event.name, "")
            body = attrs.get("gen_ai.prompt") or attrs.get("gen_ai.completion") or attrs.get("message") or attrs
            parsed = _json_list(body) if isinstance(body, str) and body.lstrip().startswith(("[", "{")) else None
            if parsed:
                messages += parsed
            elif isinstance(body, str):
                messages.append({"role": role, "content": body})
            else:
                messages.append({"role": role, **body} if isinstance(body, dict) else {"role": role})
    return messages


def _last_user_message(span: TraceSpan) -> str:
    return _last_of(_messages(span, "input"), "user")


def _output_message(span: TraceSpan) -> str:
    found = _last_of(_messages(span, "output"), None)
    if found:
        return found
    value = span.attributes.get("output.value")
    return _from_json(value, OUTPUT_JSON_KEYS) if isinstance(value, str) else ""


def _contexts(spans: list[TraceSpan], mapping: TraceMapping) -> list[dict[str, Any]]:
    """The fields of each :class:`TraceContext`: the documents of the last retriever or reranker span (by end time)
    that has any."""
    candidates = [s for s in spans if s.kind in ("RETRIEVER", "RERANKER")]
    for span in sorted(candidates, key=lambda s: (s.end_ns, s.start_ns), reverse=True):
        for prefix in mapping.document_prefixes:
            docs = _indexed(span.attributes, prefix)
            if docs:
                return [_document(d, OPENINFERENCE_DOCUMENT) for d in docs]
        genai = _json_list(span.attributes.get("gen_ai.retrieval.documents"))
        if genai:
            return [_document(d, GENAI_DOCUMENT) for d in genai if isinstance(d, dict)]
    return []


#: The keys of a document's id, content and score: OpenInference (``PREFIX.N.document.*``) and GenAI.
OPENINFERENCE_DOCUMENT = ("document.id", "document.content", "document.score")
GENAI_DOCUMENT = ("id", "content", "score")


def _document(fields: dict[str, Any], keys: tuple[str, str, str]) -> dict[str, Any]:
    id_key, text_key, score_key = keys
    doc_id, text, score = fields.get(id_key), fields.get(text_key, fields.get("text")), fields.get(score_key)
    return {
        "id": "" if doc_id is None else str(doc_id),
        "text": "" if text is None else str(text),
        "score": float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
    }


def _model(span: TraceSpan) -> str:
    for key in ("llm.model_name", "gen_ai.response.model", "gen_ai.request.model", "llm.response.model_name"):
        if span.attributes.get(key):
            return str(span.attributes[key])
    return ""


def _tokens(llms: list[TraceSpan]) -> dict[str, int]:
    """The fields of the trace's :class:`TraceTokens`: summed over its LLM spans."""
    prompt = completion = 0
    for span in llms:
        prompt += _int(span.attributes, *PROMPT_KEYS)
        completion += _int(span.attributes, *COMPLETION_KEYS)
    return {"prompt": prompt, "completion": completion}


def _int(attributes: dict[str, Any], *keys: str) -> int:
    for key in keys:
        value = attributes.get(key)
        if value is None:
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value)
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return 0
