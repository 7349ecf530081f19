"""A loopback OTLP/HTTP logs receiver (``POST /v1/logs``, protobuf), for the evaluations that
``ragassay traces export-evals`` sends; requests are parsed with the official ``opentelemetry-proto`` package.

    with OTLPLogsReceiver() as receiver:
        ...  # export to receiver.url + "/v1/logs"
        records = receiver.log_records()   # [(resource attributes, LogRecord proto)]
"""

from __future__ import annotations

from typing import Any

from .base import JSONServer, Reply, Request


def _accept(request: Request) -> Reply:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse

    body = ExportLogsServiceResponse().SerializeToString()
    return Reply(200, raw=body, headers={"Content-Type": "application/x-protobuf"})


class OTLPLogsReceiver(JSONServer):
    """Accepts every export; ``status`` other than 200 refuses them (a receiver that is down or rejects)."""

    def __init__(self, status: int = 200):
        refuse = Reply(status, {"error": "refused"})
        super().__init__({("POST", "/v1/logs"): _accept if status == 200 else (lambda request: refuse)})

    def log_records(self) -> list[tuple[dict[str, Any], Any]]:
        """Every log record received, with its resource's attributes, parsed from the protobuf bodies."""
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

        found = []
        for request in self.requests:
            parsed = ExportLogsServiceRequest.FromString(request.raw)
            for resource_logs in parsed.resource_logs:
                resource = {kv.key: kv.value.string_value for kv in resource_logs.resource.attributes}
                for scope_logs in resource_logs.scope_logs:
                    found += [(resource, record) for record in scope_logs.log_records]
        return found


def attributes(record) -> dict[str, Any]:
    """A LogRecord proto's attributes as plain values."""
    values = {}
    for kv in record.attributes:
        kind = kv.value.WhichOneof("value")
        values[kv.key] = getattr(kv.value, kind) if kind else None
    return values
