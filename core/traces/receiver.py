"""``ragassay traces receive``: an OTLP/HTTP trace receiver (starlette app served by uvicorn).

``POST /v1/traces`` with ``application/json`` or ``application/x-protobuf`` bodies, optionally gzip-encoded, as
the OTLP/HTTP specification defines (https://opentelemetry.io/docs/specs/otlp/#otlphttp), and ``POST /v1/logs``
the same way for the GenAI events that the current semantic conventions send as log records (each record with a
trace and span id is kept for its span and read as one of its events; one without is counted and dropped). A
success is 200 with an ``ExportTraceServiceResponse`` (``ExportLogsServiceResponse``) in the request's encoding;
a malformed payload is 400 with a ``google.rpc.Status`` naming the problem, and nothing of it is stored; a body
over the size limit (before or after decompression) is 413; another content type is 415. Spans of one trace may
arrive in several requests: they are stored by (trace id, span id) and assembled by trace id when read.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import threading
import zlib
from typing import Any

from ..errors import DatasetError
from .ingest import store_log_request, store_request
from .otlp import logs_request_from_bytes, logs_request_from_json, request_from_bytes, request_from_json

JSON, PROTOBUF = "application/json", "application/x-protobuf"
DEFAULT_MAX_BYTES = 8 * 1024 * 1024  # per request, after decompression
LOOPBACK = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclasses.dataclass
class ReceiverStats:
    """What a receiver has taken in so far."""

    requests: int = 0
    spans: int = 0
    rejected: int = 0
    log_records: int = 0  # kept: each belongs to a span
    log_records_dropped: int = 0  # without a trace and span id: no span to read them with
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)

    def add(self, spans: int = 0, *, rejected: bool = False, log_records: int = 0, dropped: int = 0) -> None:
        with self.lock:
            self.requests += 1
            self.spans += spans
            self.rejected += int(rejected)
            self.log_records += log_records
            self.log_records_dropped += dropped


class TooLarge(Exception):
    """The body is over the limit."""


async def _body(request: Any, max_bytes: int) -> bytes:
    """The request body, decompressed, refused (TooLarge) as soon as it passes ``max_bytes``."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise TooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise TooLarge
        chunks.append(chunk)
    body = b"".join(chunks)
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise DatasetError(f"unsupported Content-Encoding '{encoding}': send gzip or none")
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, max_bytes + 1)
    except zlib.error as exc:
        raise DatasetError(f"the gzip body cannot be decompressed: {exc}") from None
    if len(out) > max_bytes or inflater.unconsumed_tail:
        raise TooLarge
    if not inflater.eof:
        raise DatasetError("the gzip body is truncated")
    return out


def _decode(body: bytes, content_type: str, logs: bool = False) -> Any:
    if content_type == PROTOBUF:
        return (logs_request_from_bytes if logs else request_from_bytes)(body, "request")
    import json

    try:
        payload = json.loads(body)
    except ValueError as exc:
        raise DatasetError(f"request: not valid JSON ({exc})") from None
    return (logs_request_from_json if logs else request_from_json)(payload, "request")


def _reply(message: Any, content_type: str, status: int):
    from google.protobuf import json_format
    from starlette.responses import Response

    if content_type == PROTOBUF:
        return Response(message.SerializeToString(), status_code=status, media_type=PROTOBUF)
    return Response(json_format.MessageToJson(message), status_code=status, media_type=JSON)


def _status(code: int, message: str, content_type: str, http_status: int):
    from google.rpc.status_pb2 import Status

    return _reply(Status(code=code, message=message), content_type, http_status)


def make_app(store: Any, *, max_bytes: int = DEFAULT_MAX_BYTES, stats: ReceiverStats | None = None):
    """The starlette application: ``POST /v1/traces`` and ``POST /v1/logs`` into ``store``."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.routing import Route

    stats = stats if stats is not None else ReceiverStats()

    def endpoint(logs: bool):
        async def receive(request):
            content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if content_type not in (JSON, PROTOBUF):
                stats.add(rejected=True)
                message = f"unsupported Content-Type '{content_type}': send {JSON} or {PROTOBUF}"
                return _status(3, message, JSON, 415)
            try:
                decoded = _decode(await _body(request, max_bytes), content_type, logs)
                stored = await run_in_threadpool(
                    store_log_request if logs else store_request, store, decoded, "request"
                )
            except TooLarge:
                stats.add(rejected=True)
                return _status(8, f"request body over the limit of {max_bytes:,} bytes", content_type, 413)
            except DatasetError as exc:
                stats.add(rejected=True)
                return _status(3, f"{exc}; nothing of this request was stored", content_type, 400)
            if logs:
                stats.add(log_records=stored[0], dropped=stored[1])
                return _reply(ExportLogsServiceResponse(), content_type, 200)
            stats.add(stored)
            return _reply(ExportTraceServiceResponse(), content_type, 200)

        return receive

    routes = [
        Route("/v1/traces", endpoint(False), methods=["POST"]),
        Route("/v1/logs", endpoint(True), methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.stats = stats
    return app


class Receiver:
    """A receiver served by uvicorn in a background thread (tests, benchmarks); ``port=0`` picks a free port.

    with Receiver(store) as receiver:
        post(receiver.url, ...)
    """

    def __init__(self, store: Any, *, host: str = LOOPBACK, port: int = 0, max_bytes: int = DEFAULT_MAX_BYTES):
        import uvicorn

        self.stats = ReceiverStats()
        app = make_app(store, max_bytes=max_bytes, stats=self.stats)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="otlp-receiver", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/v1/traces"

    def __enter__(self) -> Receiver:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the OTLP receiver did not start (is the port in use?)")
            self.thread.join(0.01)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def serve(store: Any, *, host: str, port: int, max_bytes: int, on_started=None) -> ReceiverStats:
    """Serve in the foreground until Ctrl-C (uvicorn handles the signal and shuts down cleanly)."""
    import uvicorn

    stats = ReceiverStats()
    app = make_app(store, max_bytes=max_bytes, stats=stats)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    if on_started is not None:
        original = server.startup

        async def startup(sockets=None):
            await original(sockets)
            if server.started:
                on_started(server)

        server.startup = startup
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn shut down cleanly, then re-raised the signal it captured
        pass
    return stats
