"""A trace's span tree as an agent trajectory: one :class:`~ragassay.Step` per agent, tool, model and retrieval
span, ordered by start time, nested agents linked by ``parent_id``, and the final answer last.

Span -> step (conventions and versions: :mod:`ragassay.traces.trajectory_fields`):

* ``gen_ai.operation.name`` = invoke_agent, OpenInference ``AGENT`` -> ``agent`` (name, input, output);
* execute_tool, ``TOOL`` -> ``tool_call`` (name, call_id, arguments, result, error);
* chat, text_completion, generate_content, ``LLM`` -> ``model_call`` (model as name, input, output, usage);
* retrieval, ``RETRIEVER``, ``RERANKER`` -> ``retrieval`` (query, context_ids, document_ids, scores);
* anything else (CHAIN, EMBEDDING, create_agent, GUARDRAIL, unknown) is no step: counted in ``skipped`` by kind.

Every step's ``parent_id`` is the nearest enclosing agent step (None at top level); its ``id`` is the span id;
``latency_s`` and ``started_at`` come from the span's times; ``error`` from its status and ``error.type``. The
last step is ``answer`` (id ``"answer"``, top level) with the trace's answer: the root span's output, else the
last model call's (:func:`ragassay.traces.map_trace`). Spans a :class:`~ragassay.traces.TraceMapping` names by
``span_kinds`` count as the kind it gives them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..models import Step
from .mapping import TraceMapping, _order, span_kind
from .model import Trace, TraceSpan
from .trajectory_fields import agent_fields, model_fields, retrieval_fields, tool_fields

ANSWER_STEP_ID = "answer"
#: gen_ai.operation.name values that are an agent's creation, not a step of its run.
NOT_A_STEP = {"create_agent"}


class SpanTrajectory(BaseModel):
    """The trajectory read from spans, with the spans that were not steps counted by kind ('' = unknown)."""

    model_config = ConfigDict(extra="forbid")

    steps: list[Step] = Field(default_factory=list, description="Steps in start-time order, the answer last.")
    skipped: dict[str, int] = Field(
        default_factory=dict, description="Spans that are no step, by kind (CHAIN, EMBEDDING, '' for unknown)."
    )


def trace_trajectory(trace: Trace, mapping: TraceMapping | None = None) -> SpanTrajectory:
    """The trajectory of a mapped :class:`~ragassay.traces.Trace` (its spans and its answer)."""
    return spans_to_trajectory(trace.spans, answer=trace.answer, mapping=mapping)


def spans_to_trajectory(
    spans: list[TraceSpan], answer: str = "", mapping: TraceMapping | None = None
) -> SpanTrajectory:
    """The trajectory of one trace's spans (any order; the spans are not changed). ``answer``: the text of the
    final answer step (none when empty)."""
    mapping = mapping or TraceMapping()
    mapped = [span_kind(s, mapping) for s in spans]
    kinds = {s.span_id: _step_kind(s, kind) for s, kind in zip(spans, mapped)}
    by_id = {s.span_id: s for s in spans} if "agent" in kinds.values() else None
    keys = list(map(_order, spans))
    steps: list[dict] = []  # each step's fields, validated with the trajectory
    skipped: dict[str, int] = {}
    for i in sorted(range(len(spans)), key=keys.__getitem__):  # the spans' indices by start, end, span id
        span, mapped_kind = spans[i], mapped[i]
        kind = kinds[span.span_id]
        if kind is None:
            label = _label(span, mapped_kind)
            skipped[label] = skipped.get(label, 0) + 1
            continue
        if span.kind != mapped_kind:  # a copy with its mapped kind (a mapped trace's spans have it already)
            span = span.model_copy(update={"kind": mapped_kind})
        parent = None if by_id is None else _enclosing_agent(span, by_id, kinds)
        if kind == "retrieval":
            steps.append(retrieval_fields(span, parent, mapping.document_prefixes))
        else:
            steps.append(STEP_FIELDS[kind](span, parent))
    if answer:
        steps.append({"id": ANSWER_STEP_ID, "kind": "answer", "output": answer})
    return SpanTrajectory(steps=steps, skipped=dict(sorted(skipped.items())))


#: Step kind -> the fields of its step from its span (a retrieval's also need the mapping's document prefixes).
STEP_FIELDS = {"agent": agent_fields, "tool_call": tool_fields, "model_call": model_fields}
#: Mapped span kind -> the step it is.
STEP_KINDS = {
    "AGENT": "agent",
    "TOOL": "tool_call",
    "LLM": "model_call",
    "RETRIEVER": "retrieval",
    "RERANKER": "retrieval",
}


def _step_kind(span: TraceSpan, mapped_kind: str) -> str | None:
    if span.attributes.get("gen_ai.operation.name") in NOT_A_STEP:
        return None
    return STEP_KINDS.get(mapped_kind)


def _label(span: TraceSpan, mapped_kind: str) -> str:
    """The kind a skipped span is counted under: its mapped kind, else what it declares, else '' (unknown)."""
    operation = span.attributes.get("gen_ai.operation.name")
    if operation in NOT_A_STEP:
        return operation
    declared = span.attributes.get("openinference.span.kind") or operation
    return mapped_kind or (str(declared) if declared else "")


def _enclosing_agent(span: TraceSpan, by_id: dict[str, TraceSpan], kinds: dict[str, str | None]) -> str | None:
    """The span id of the nearest ancestor that is an agent step (a broken or cyclic parent chain ends the walk)."""
    seen = {span.span_id}
    parent = span.parent_span_id
    while parent and parent in by_id and parent not in seen:
        if kinds[parent] == "agent":
            return parent
        seen.add(parent)
        parent = by_id[parent].parent_span_id
    return None
