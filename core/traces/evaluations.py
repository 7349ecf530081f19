"""Evaluations out: one OpenTelemetry ``gen_ai.evaluation.result`` event per (trace, metric) of a run scored from
traces, linked to the evaluated span, sent with the official OTLP/HTTP exporter or written as OTLP JSON.

The event follows the OpenTelemetry GenAI semantic conventions (``semantic-conventions-genai``,
``model/gen-ai/events.yaml``, event ``gen_ai.evaluation.result``, stability: development): a log record named
``gen_ai.evaluation.result`` parented to the span being evaluated (its trace id and span id), with

- ``gen_ai.evaluation.name`` (required): the metric label, or the judge label;
- ``gen_ai.evaluation.score.value``: the metric's value or the judge's score, when there is one;
- ``gen_ai.evaluation.score.label``: the judge's verdict (``correct``, ``grounded``, ...); metrics have none;
- ``gen_ai.evaluation.explanation``: the judge's explanation, or why the value is unscored;
- ``error.type`` = ``unscored`` (the convention's ``gen_ai.error`` group) for an unscored value: it is exported
  with its reason and no score, never dropped and never sent as 0;

plus the evaluator's provenance under ``ragassay.*``: ``ragassay.version``, ``ragassay.run.id``,
``ragassay.system``, ``ragassay.evaluation.kind`` (metric or judge), ``ragassay.evaluator.name`` and
``ragassay.evaluator.version`` (the registered component and its distribution's version), and for judges
``ragassay.judge.id``, ``ragassay.judge.model`` and ``ragassay.judge.prompt_version`` where known.

The evaluated span is the output's ``answer_span_id`` (the LLM span that produced the answer), else its root
``span_id``, read from the output's trace, else from the sample's ``metadata["trace"]``. A score whose trace ids
are missing or malformed is not sent: it is counted in :attr:`Evaluations.skipped` with the reason. Only repeat 0
of ``run --repeat N`` is exported. Timestamps are the run's last update, so the same run gives the same bytes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

EVENT = "gen_ai.evaluation.result"
NAME, VALUE, LABEL = "gen_ai.evaluation.name", "gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label"
EXPLANATION, ERROR_TYPE, UNSCORED = "gen_ai.evaluation.explanation", "error.type", "unscored"
_TRACE_ID, _SPAN_ID = re.compile(r"^[0-9a-f]{32}$"), re.compile(r"^[0-9a-f]{16}$")
BATCH = 512  # events per OTLP request


@dataclasses.dataclass(frozen=True)
class EvaluationEvent:
    """One evaluation, ready to send: the evaluated span and the event's attributes."""

    trace_id: str  # 32 hex
    span_id: str  # 16 hex
    attributes: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Evaluations:
    """The events of a run, and the scores that could not be linked to a span (with the reason)."""

    run_id: str
    timestamp_ns: int
    events: list[EvaluationEvent]
    skipped: list[tuple[str, str, str, str]]  # (system, question id, column, reason)

    @property
    def unscored(self) -> int:
        """Events that carry a reason instead of a score."""
        return sum(1 for e in self.events if ERROR_TYPE in e.attributes)


def evaluations(run) -> Evaluations:
    """The events of ``run`` (:class:`ragassay.results.RunData` read with payloads), in the run's score order."""
    from .. import __version__

    if not run.has_payloads:
        raise ValueError("evaluations() needs the outputs: read_run(store, run, payloads=True)")
    base = {"ragassay.version": __version__, "ragassay.run.id": run.id}
    spans: dict[tuple[str, str], tuple[str, str] | str] = {}
    events, skipped = [], []
    for score in run.ordered_scores():
        if score.repeat != 0:
            continue
        key = (score.system, score.question_id)
        if key not in spans:
            spans[key] = _span_of(run, *key)
        span = spans[key]
        if isinstance(span, str):
            skipped.append((score.system, score.question_id, score.column, span))
            continue
        attributes = {**base, "ragassay.system": score.system, **_evaluation(run, score)}
        events.append(EvaluationEvent(span[0], span[1], attributes))
    return Evaluations(run.id, int(run.info.updated_at * 1e9), events, skipped)


def _span_of(run, system: str, question_id: str) -> tuple[str, str] | str:
    """(trace id, span id) of the output's evaluated span, or why there is none."""
    output = run.payload(system, question_id)
    sample = run.samples[run.position[question_id]] if question_id in run.position else None
    for ids in ((output.trace if output else {}), (sample.metadata.get("trace") if sample else None) or {}):
        trace_id, span_id = ids.get("trace_id"), ids.get("answer_span_id") or ids.get("span_id")
        if trace_id is None and span_id is None:
            continue
        trace_id, span_id = str(trace_id or "").lower(), str(span_id or "").lower()
        valid = _TRACE_ID.match(trace_id) and _SPAN_ID.match(span_id)
        if not valid or not int(trace_id, 16) or not int(span_id, 16):
            return f"malformed trace ids (trace {trace_id!r}, span {span_id!r}): 32 and 16 hex digits, not all 0"
        return trace_id, span_id
    return "no trace id: neither the output's trace nor the sample's metadata.trace names one"


def _evaluation(run, score) -> dict[str, Any]:
    """The gen_ai.evaluation.* attributes and the evaluator's provenance of one score."""
    return evaluation_attributes(run.info.spec, score)


def evaluation_attributes(run_spec: dict, score) -> dict[str, Any]:
    """The gen_ai.evaluation.* attributes and the evaluator's provenance of one score (anything with ``kind``,
    ``label``, ``value``, ``verdict``, ``explanation``, ``unscored_reason``, ``judge_id`` and ``details``), under
    the run's resolved spec ``run_spec`` (``ragassay watch`` sends its values as they are made)."""
    spec = ((run_spec.get("metrics" if score.kind == "metric" else "judges") or {}).get(score.label)) or {}
    attributes: dict[str, Any] = {NAME: score.label, "ragassay.evaluation.kind": score.kind}
    attributes["ragassay.evaluator.name"] = spec.get("name") or score.label
    if spec.get("version"):
        attributes["ragassay.evaluator.version"] = spec["version"]
    if score.value is not None:
        attributes[VALUE] = float(score.value)
    if score.kind == "judge":
        attributes.update(_judge(spec, score))
    if score.value is None:
        attributes[ERROR_TYPE] = UNSCORED
        attributes[EXPLANATION] = score.unscored_reason or score.explanation or "unscored"
    elif score.explanation:
        attributes[EXPLANATION] = score.explanation
    return attributes


def _judge(spec: dict, score) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if score.verdict and score.value is not None:
        found[LABEL] = score.verdict
    if score.judge_id:
        found["ragassay.judge.id"] = score.judge_id
    model = _model(spec)
    if model:
        found["ragassay.judge.model"] = model
    version = (spec.get("options") or {}).get("prompt_version") or score.details.get("prompt_version")
    if version:
        found["ragassay.judge.prompt_version"] = str(version)
    return found


def _model(spec: dict) -> str:
    """``backend/model`` of the first nested component (a judge's generator) that names a model."""
    for component in (spec.get("components") or {}).values():
        model = (component.get("options") or {}).get("model")
        if model:
            return f"{component.get('name', '')}/{model}".lstrip("/")
        nested = _model(component)
        if nested:
            return nested
    return ""


# -- OTLP ------------------------------------------------------------------------------------------------------


def log_records(found: Evaluations) -> Iterator[list]:
    """The events as SDK log records (``ReadableLogRecord``), in batches of :data:`BATCH`."""
    from opentelemetry._logs import LogRecord
    from opentelemetry.sdk._logs import ReadableLogRecord
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

    from .. import __version__

    resource = Resource({"service.name": "ragassay", "service.version": __version__})
    scope = InstrumentationScope("ragassay", __version__)
    batch = []
    for event in found.events:
        span = SpanContext(int(event.trace_id, 16), int(event.span_id, 16), True, TraceFlags(TraceFlags.SAMPLED))
        record = LogRecord(
            timestamp=found.timestamp_ns,
            observed_timestamp=found.timestamp_ns,
            context=set_span_in_context(NonRecordingSpan(span)),
            event_name=EVENT,
            attributes=event.attributes,
        )
        batch.append(ReadableLogRecord(log_record=record, resource=resource, instrumentation_scope=scope))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def send(found: Evaluations, endpoint: str, *, timeout: float = 10.0, headers: dict[str, str] | None = None) -> int:
    """POST the events to an OTLP/HTTP logs ``endpoint`` (``.../v1/logs`` is added to a bare host URL) with the
    official exporter; returns the events sent.

    :raises ragassay.errors.ConfigError: the receiver refused a batch or could not be reached (how many were sent
        before is in the message).
    """
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs.export import LogRecordExportResult

    from ..errors import ConfigError

    exporter = OTLPLogExporter(endpoint=logs_endpoint(endpoint), timeout=timeout, headers=headers)
    sent = 0
    try:
        for batch in log_records(found):
            if exporter.export(batch) != LogRecordExportResult.SUCCESS:
                raise ConfigError(
                    f"the OTLP receiver at {logs_endpoint(endpoint)} did not accept the evaluations after {sent} of "
                    f"{len(found.events)} were sent; check the URL (an OTLP/HTTP logs endpoint, e.g. "
                    "http://localhost:4318/v1/logs) and that the receiver is up, then export again"
                )
            sent += len(batch)
    finally:
        exporter.shutdown()
    return sent


def logs_endpoint(url: str) -> str:
    """The OTLP/HTTP logs URL: ``url`` as given when it names a path, else ``url`` + ``/v1/logs``."""
    from urllib.parse import urlsplit

    return url if urlsplit(url).path not in ("", "/") else url.rstrip("/") + "/v1/logs"


def write_json(found: Evaluations, path: Path) -> int:
    """Write the events as OTLP JSON, one ``ExportLogsServiceRequest`` per line (the OTLP/HTTP JSON encoding, as
    the Collector's file exporter writes it: hex trace and span ids, integer enums); returns the events written."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

    lines = []
    for batch in log_records(found):
        request = MessageToDict(encode_logs(batch), use_integers_for_enums=True)
        for resource in request.get("resourceLogs", []):
            for scope in resource.get("scopeLogs", []):
                for record in scope.get("logRecords", []):
                    _hex_ids(record)
        lines.append(json.dumps(request, separators=(",", ":"), ensure_ascii=False))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(found.events)


def _hex_ids(record: dict) -> None:
    """OTLP JSON writes trace and span ids as hex, where protobuf's JSON mapping writes base64."""
    import base64

    record.pop("body", None)  # an empty AnyValue: the event has no body
    for key in ("traceId", "spanId"):
        if key in record:
            record[key] = base64.b64decode(record[key]).hex()
