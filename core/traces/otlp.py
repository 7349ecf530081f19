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
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise DatasetError(f"{where}: malformed OTLP JSON: {exc}") from None


def request_from_bytes(data: bytes, where: str):
    """An ``ExportTraceServiceRequest`` from its protobuf serialization."""
    from google.protobuf.message import DecodeError

    request = _request_class()()
    try:
        request.ParseFromString(data)
    except (DecodeError, ValueError) as exc:
        raise DatasetError(f"{where}: malformed OTLP protobuf: {exc}") from None
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
        handle.seek(0)
        if not line_mode:
            try:
                payload = json.load(handle)
            except ValueError as exc:
                where = f"{path}, line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else str(path)
                raise DatasetError(f"{where}: {describe_json_error(exc)}") from None
            yield str(path), request_from_json(payload, str(path))
            return
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            where = f"{path}, line {number}"
            try:
                payload = json.loads(text)
            except ValueError as exc:
                raise DatasetError(f"{where}: {describe_json_error(exc)}") from None
            yield where, request_from_json(payload, where)


def _protobuf_file(path: Path) -> Iterator[tuple[str, Any]]:
    """One serialized request (it starts with field 1's tag, 0x0a), or length-prefixed messages (4 bytes,
    big-endian, as the Collector's file exporter writes them)."""
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
                raise DatasetError(f"{where}: truncated length prefix ({len(prefix)} of 4 bytes)")
            size = int.from_bytes(prefix, "big")
            data = handle.read(size)
            if len(data) < size:
                raise DatasetError(f"{where}: truncated message ({len(data)} of {size} bytes)")
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
