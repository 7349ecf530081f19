"""Decoding OTLP trace payloads with the official ``opentelemetry-proto`` messages (no hand-written parsing).

Accepted: the OTLP/HTTP JSON encoding of an ``ExportTraceServiceRequest`` (trace and span ids in hex, as the
OTLP specification says, converted to the protobuf JSON mapping's base64 before
``google.protobuf.json_format.ParseDict``), the OpenTelemetry Collector's file exporter output (one JSON request
per line), JSON lines of ``ResourceSpans``, and binary protobuf: one serialized request, or the Collector file
exporter's protobuf output (each message preceded by its length as 4 big-endian bytes).

Specification: https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import DatasetError
from ..text import describe_json_error
from .model import SpanEvent, TraceSpan

JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
PROTOBUF_SUFFIXES = (".pb", ".proto", ".protobuf", ".bin", ".binpb")
_HEX = re.compile(r"^[0-9a-fA-F]*$")
SHOWN_CHARS = 300  # of a decoder's message, which may quote the payload
JSON_HINT = "is it an OTLP JSON file (an ExportTraceServiceRequest, the Collector's file exporter output)?"
PROTOBUF_HINT = (
    "is it an OTLP protobuf file (one ExportTraceServiceRequest, or the Collector file exporter's messages, each "
    "after its length in 4 bytes)?"
)
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


class StoredSpan(NamedTuple):
    """One span with its trace id and the attributes of its resource, ready to store."""

    trace_id: str
    span: TraceSpan
    resource: dict[str, Any]


def _request_class():
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    return ExportTraceServiceRequest


def _id_to_base64(value: Any, size: int) -> Any:
    """A hex id of ``size`` bytes in base64 (what ``json_format`` reads for bytes); anything else as it is, for
    ``json_format`` to judge."""
    if isinstance(value, str) and len(value) == 2 * size and _HEX.match(value):
        return base64.b64encode(bytes.fromhex(value)).decode("ascii")
    return value


def _with_ids(item: Any) -> Any:
    """A copy of a span or link object with its hex ids (``traceId``, ``spanId``, ``parentSpanId``) in base64."""
    if not isinstance(item, dict):
        return item
    out = dict(item)
    for key, size in _ID_FIELDS.items():
        if key in out:
            out[key] = _id_to_base64(out[key], size)
    if isinstance(out.get("links"), list):
        out["links"] = [_with_ids(link) for link in out["links"]]
    return out


def _children(item: Any, camel: str, snake: str, convert) -> Any:
    """A shallow copy of ``item`` with its list under ``camel`` (or ``snake``) converted item by item."""
    if not isinstance(item, dict):
        return item
    key = camel if camel in item else snake
    if not isinstance(item.get(key), list):
        return item
    return {**item, key: [convert(child) for child in item[key]]}


def _hex_ids_to_base64(payload: Any) -> Any:
    """The request with the hex ids of its spans and links in the base64 form ``json_format`` reads: only the
    objects on the way to them are copied (the caller's payload is left as it is; attributes are shared)."""

    def scope(item: Any) -> Any:
        return _children(item, "spans", "spans", _with_ids)

    def resource(item: Any) -> Any:
        return _children(item, "scopeSpans", "scope_spans", scope)

    return _children(payload, "resourceSpans", "resource_spans", resource)


def request_from_json(payload: Any, where: str):
    """An ``ExportTraceServiceRequest`` from a decoded OTLP JSON object (a request, or one ``ResourceSpans``)."""
    from google.protobuf import json_format

    if not isinstance(payload, dict):
        raise DatasetError(f"{where}: expected a JSON object (an OTLP ExportTraceServiceRequest), not {_kind(payload)}")
    if "resourceSpans" not in payload and "resource_spans" not in payload:
        if "scopeSpans" in payload or "scope_spans" in payload or "resource" in payload:
            payload = {"resourceSpans": [payload]}  # one ResourceSpans per line (.jsonl of resource spans)
        else:
            keys = ", ".join(sorted(payload)[:5]) or "none"
            raise DatasetError(
                f"{where}: not an OTLP trace payload: no 'resourceSpans' (keys: {keys}); export traces with the "
                "OTLP JSON encoding"
            )
    try:
        return json_format.ParseDict(_hex_ids_to_base64(payload), _request_class()())
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        raise DatasetError(f"{where}: malformed OTLP JSON: {_shortened(exc)}") from None


def loads(text: str | bytes, where: str, hint: str = JSON_HINT, *, lines: bool = False) -> Any:
    """``json.loads(text)``, or :class:`DatasetError` naming ``where`` (with the line when ``lines``: a whole file)
    and ending with ``hint`` when it is not JSON: not JSON, or nested deeper than Python's JSON reader goes (``[`` a
    thousand times over is 2 KB)."""
    try:
        return json.loads(text)
    except ValueError as exc:
        if lines and isinstance(exc, json.JSONDecodeError):
            where = f"{where}, line {exc.lineno}"
        raise DatasetError(f"{where}: {_shortened(describe_json_error(exc))}; {hint}") from None
    except RecursionError:
        raise DatasetError(f"{where}: JSON nested too deeply to read; OTLP JSON is a few levels deep") from None


def _shortened(exc: BaseException | str) -> str:
    text = str(exc)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + f"... ({len(text):,} characters)"


def request_from_bytes(data: bytes, where: str):
    """An ``ExportTraceServiceRequest`` from its protobuf serialization."""
    from google.protobuf.message import DecodeError

    request = _request_class()()
    try:
        request.ParseFromString(data)
    except (DecodeError, ValueError) as exc:
        raise DatasetError(f"{where}: malformed OTLP protobuf: {_shortened(exc)}; {PROTOBUF_HINT}") from None
    return request


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string"}.get(type(value), type(value).__name__)


def any_value(value) -> Any:
    """A Python value from an OTLP ``AnyValue`` (arrays as lists, key-value lists as dicts, bytes as base64)."""
    field = value.WhichOneof("value")
    if field is None:
        return None
    if field == "array_value":
        return [any_value(item) for item in value.array_value.values]
    if field == "kvlist_value":
        return attributes(value.kvlist_value.values)
    if field == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, field)


def attributes(pairs) -> dict[str, Any]:
    """Attributes (repeated ``KeyValue``) as a dict; every key kept."""
    return {pair.key: any_value(pair.value) for pair in pairs}


def _hex(raw: bytes, size: int, what: str, where: str, *, optional: bool = False) -> str | None:
    if not raw and optional:
        return None
    if len(raw) != size:
        raise DatasetError(
            f"{where}: {what} has {len(raw)} bytes, expected {size} (OTLP JSON gives it as {2 * size} hex characters)"
        )
    if not any(raw):
        raise DatasetError(f"{where}: {what} is all zeros, which OTLP defines as invalid")
    return binascii.hexlify(raw).decode("ascii")


def spans_of(request, where: str) -> list[StoredSpan]:
    """Every span of a request, validated (ids of the right length, not zero); an invalid span fails the whole
    request, so a malformed payload stores nothing."""
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    out: list[StoredSpan] = []
    for r, resource_spans in enumerate(request.resource_spans):
        resource = attributes(resource_spans.resource.attributes)
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            scope = {"name": scope_spans.scope.name, "version": scope_spans.scope.version}
            for n, span in enumerate(scope_spans.spans):
                at = f"{where}: resourceSpans[{r}].scopeSpans[{s}].spans[{n}]"
                trace_id = _hex(span.trace_id, 16, "traceId", at)
                record = TraceSpan(
                    span_id=_hex(span.span_id, 8, "spanId", at),
                    parent_span_id=_hex(span.parent_span_id, 8, "parentSpanId", at, optional=True),
                    name=span.name,
                    otel_kind=Span.SpanKind.Name(span.kind),
                    start_ns=span.start_time_unix_nano,
                    end_ns=span.end_time_unix_nano,
                    status={"code": Status.StatusCode.Name(span.status.code), "message": span.status.message},
                    scope={k: v for k, v in scope.items() if v},
                    attributes=attributes(span.attributes),
                    events=[
                        SpanEvent(name=e.name, time_ns=e.time_unix_nano, attributes=attributes(e.attributes))
                        for e in span.events
                    ],
                )
                out.append(StoredSpan(trace_id, record, resource))
    return out


def read_file(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, request) for each OTLP request in a file, streamed (one line or one message at a time)."""
    suffix = path.suffix.lower()
    if suffix in PROTOBUF_SUFFIXES:
        yield from _protobuf_file(path)
    elif suffix in JSON_SUFFIXES:
        yield from _json_file(path)
    else:
        raise DatasetError(
            f"{path}: unknown trace file extension '{path.suffix}'; use .json/.jsonl (OTLP JSON) or .pb (protobuf)"
        )


def _json_file(path: Path) -> Iterator[tuple[str, Any]]:
    """Line mode when the first non-blank line is a whole JSON object (file exporter, JSON lines), else one
    request in the whole file (a pretty-printed export)."""
    try:
        yield from _json_requests(path)
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start:,}); {JSON_HINT}") from None


def _json_requests(path: Path) -> Iterator[tuple[str, Any]]:
    with path.open(encoding="utf-8-sig") as handle:
        first = ""
        for first in handle:
            if first.strip():
                break
        try:
            json.loads(first)
            line_mode = True
        except ValueError:
            line_mode = False
        except RecursionError:  # a whole value, too deep: read as a line, to say which one
            line_mode = True
        handle.seek(0)
        if not line_mode:
            yield str(path), request_from_json(loads(handle.read(), str(path), lines=True), str(path))
            return
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            where = f"{path}, line {number}"
            yield where, request_from_json(loads(text, where), where)


def _protobuf_file(path: Path) -> Iterator[tuple[str, Any]]:
    """One serialized request (it starts with field 1's tag, 0x0a), or length-prefixed messages (4 bytes,
    big-endian, as the Collector's file exporter writes them)."""
    total = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(1)
        handle.seek(0)
        if head == b"\x0a" or not head:
            yield str(path), request_from_bytes(handle.read(), str(path))
            return
        number = 0
        while prefix := handle.read(4):
            number += 1
            where = f"{path}, message {number}"
            if len(prefix) < 4:
                raise DatasetError(f"{where}: truncated length prefix ({len(prefix)} of 4 bytes); {PROTOBUF_HINT}")
            size = int.from_bytes(prefix, "big")
            left = total - handle.tell()
            if size > left:
                raise DatasetError(
                    f"{where}: its length prefix says {size:,} bytes, but {left:,} follow: not an OTLP message; "
                    f"{PROTOBUF_HINT}"
                )
            data = handle.read(size)
            yield where, request_from_bytes(data, where)


def trace_files(path: Path) -> list[Path]:
    """The trace files of ``path``: itself, or every .json/.jsonl/.pb (...) file under it, sorted."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DatasetError(f"{path}: no such file or folder")
    suffixes = JSON_SUFFIXES + PROTOBUF_SUFFIXES
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in suffixes)
    if not files:
        raise DatasetError(f"{path}: no trace files (.json, .jsonl, .pb, ...) in this folder")
    return files


# -- GenAI events as OTLP log records (POST /v1/logs) ---------------------------------------------------------------
#
# The GenAI semantic conventions emit events (gen_ai.user.message, gen_ai.choice,
# gen_ai.client.inference.operation.details, ...) as OTLP log records carrying the trace and span ids of the span
# they belong to. Each is stored as a carrier row beside the spans (otel_kind LOG_RECORD, parent = its span, one
# event: the record's event name, time, attributes and body), and :func:`ragassay.traces.storage.grouped` folds the
# carriers into their span's events when a trace is read, whichever arrived first.

#: ``TraceSpan.otel_kind`` of a stored log record (never an OTLP span kind).
LOG_RECORD = "LOG_RECORD"


def _logs_request_class():
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    return ExportLogsServiceRequest


def logs_request_from_json(payload: Any, where: str):
    """An ``ExportLogsServiceRequest`` from a decoded OTLP JSON object (hex trace and span ids, as OTLP JSON)."""
    from google.protobuf import json_format

    if not isinstance(payload, dict) or not ("resourceLogs" in payload or "resource_logs" in payload):
        keys = ", ".join(sorted(payload)[:5]) if isinstance(payload, dict) else _kind(payload)
        raise DatasetError(f"{where}: not an OTLP logs payload: no 'resourceLogs' ({keys})")

    def record(item: Any) -> Any:
        return _with_ids(item)

    def scope(item: Any) -> Any:
        return _children(item, "logRecords", "log_records", record)

    def resource(item: Any) -> Any:
        return _children(item, "scopeLogs", "scope_logs", scope)

    try:
        converted = _children(payload, "resourceLogs", "resource_logs", resource)
        return json_format.ParseDict(converted, _logs_request_class()())
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise DatasetError(f"{where}: malformed OTLP JSON: {exc}") from None


def logs_request_from_bytes(data: bytes, where: str):
    """An ``ExportLogsServiceRequest`` from its protobuf serialization."""
    from google.protobuf.message import DecodeError

    request = _logs_request_class()()
    try:
        request.ParseFromString(data)
    except (DecodeError, ValueError) as exc:
        raise DatasetError(f"{where}: malformed OTLP protobuf: {_shortened(exc)}") from None
    return request


def log_events_of(request, where: str) -> tuple[list[StoredSpan], int]:
    """(the carrier rows of the request's log records that belong to a span, how many records belong to none):
    a record's event name is ``event_name``, else its ``event.name`` attribute, else ``log``; its body joins its
    attributes (a map body key by key, anything else as ``body``)."""
    import hashlib

    out: list[StoredSpan] = []
    unattached = 0
    for r, resource_logs in enumerate(request.resource_logs):
        resource = attributes(resource_logs.resource.attributes)
        for s, scope_logs in enumerate(resource_logs.scope_logs):
            for n, log in enumerate(scope_logs.log_records):
                at = f"{where}: resourceLogs[{r}].scopeLogs[{s}].logRecords[{n}]"
                if not log.trace_id or not log.span_id:
                    unattached += 1
                    continue
                trace_id, span_id = _hex(log.trace_id, 16, "traceId", at), _hex(log.span_id, 8, "spanId", at)
                values = attributes(log.attributes)
                body = any_value(log.body) if log.HasField("body") else None
                values.update(body if isinstance(body, dict) else {} if body is None else {"body": body})
                name = log.event_name or str(values.pop("event.name", "") or "log")
                time_ns = log.time_unix_nano or log.observed_time_unix_nano
                key = json.dumps([trace_id, span_id, name, time_ns, values], sort_keys=True, default=str)
                record = TraceSpan(
                    span_id=hashlib.sha256(key.encode()).hexdigest()[:16],
                    parent_span_id=span_id,
                    name=name,
                    otel_kind=LOG_RECORD,
                    start_ns=time_ns,
                    end_ns=time_ns,
                    events=[SpanEvent(name=name, time_ns=time_ns, attributes=values)],
                )
                out.append(StoredSpan(trace_id, record, resource))
    return out, unattached
