"""``ragassay traces receive``: an OTLP/HTTP trace receiver (starlette app served by uvicorn).

``POST /v1/traces`` with ``application/json`` or ``application/x-protobuf`` bodies, optionally gzip-encoded, as
the OTLP/HTTP specification defines (https://opentelemetry.io/docs/specs/otlp/#otlphttp). A success is 200 with
an ``ExportTraceServiceResponse`` in the request's encoding; a malformed payload is 400 with a
``google.rpc.Status`` naming the problem, and nothing of it is stored; a body over the size limit (before or
after decompression) is 413; another content type is 415. When the results store stays busy for
:data:`STORE_WAIT_S` (another writer holds a SQLite file's lock) or is unreachable for a moment, the answer is
503 with ``Retry-After`` (:data:`RETRY_AFTER_S`), which OTLP exporters retry, and nothing of the request is
stored. Spans of one trace may arrive in several requests: they are stored by (trace id, span id) and assembled
by trace id when read.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import threading
import zlib
from typing import Any

from ..errors import DatasetError
from .ingest import store_request
from .otlp import request_from_bytes, request_from_json

JSON, PROTOBUF = "application/json", "application/x-protobuf"
DEFAULT_MAX_BYTES = 8 * 1024 * 1024  # per request, after decompression
LOOPBACK = "127.0.0.1"
STORE_WAIT_S = 2.0  # the longest a request waits for another writer of the store (exporters time out at 10 s)
RETRY_AFTER_S = 1  # what a 503 asks the exporter to wait before sending the request again


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
    busy: int = 0  # answered 503: the store was busy (the exporter sends them again)
    lock: threading.Condition = dataclasses.field(default_factory=threading.Condition, repr=False)

    def add(self, spans: int = 0, *, rejected: bool = False, busy: bool = False) -> None:
        with self.lock:
            self.requests += 1
            self.spans += spans
            self.rejected += int(rejected)
            self.busy += int(busy)
            self.lock.notify_all()

    def wait_for(self, done: Any, timeout: float) -> bool:
        """Wait until ``done(self)`` holds after a request (False after ``timeout`` s): tests wait for the
        request they assert on, never for time."""
        with self.lock:
            return self.lock.wait_for(lambda: done(self), timeout)


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


def _decode(body: bytes, content_type: str) -> Any:
    if content_type == PROTOBUF:
        return request_from_bytes(body, "request")
    import json

    try:
        payload = json.loads(body)
    except ValueError as exc:
        raise DatasetError(f"request: not valid JSON ({exc})") from None
    return request_from_json(payload, "request")


def _reply(message: Any, content_type: str, status: int, headers: dict[str, str] | None = None):
    from google.protobuf import json_format
    from starlette.responses import Response

    if content_type == PROTOBUF:
        return Response(message.SerializeToString(), status_code=status, media_type=PROTOBUF, headers=headers)
    return Response(json_format.MessageToJson(message), status_code=status, media_type=JSON, headers=headers)


def _status(code: int, message: str, content_type: str, http_status: int, headers: dict[str, str] | None = None):
    from google.rpc.status_pb2 import Status

    return _reply(Status(code=code, message=message), content_type, http_status, headers)


def _store_busy(exc: Exception) -> str | None:
    """Why the store could not take a request just now (a lock held by another writer, a lost connection), or
    None when ``exc`` is not such a moment (a bug, a full disk: raised as it is)."""
    from ..errors import StoreUnavailableError
    from ..store.healing import diagnose

    diagnosis = diagnose(exc)
    if diagnosis is not None and diagnosis.transient:
        return diagnosis.cause
    return "it is unavailable" if isinstance(exc, StoreUnavailableError) else None


def make_app(store: Any, *, max_bytes: int = DEFAULT_MAX_BYTES, stats: ReceiverStats | None = None):
    """The starlette application: ``POST /v1/traces`` into ``store``."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.routing import Route

    stats = stats if stats is not None else ReceiverStats()

    async def traces(request):
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type not in (JSON, PROTOBUF):
            stats.add(rejected=True)
            message = f"unsupported Content-Type '{content_type}': send {JSON} or {PROTOBUF}"
            return _status(3, message, JSON, 415)
        try:
            decoded = _decode(await _body(request, max_bytes), content_type)
            spans = await run_in_threadpool(store_request, store, decoded, "request", wait_s=STORE_WAIT_S)
        except TooLarge:
            stats.add(rejected=True)
            return _status(8, f"request body over the limit of {max_bytes:,} bytes", content_type, 413)
        except DatasetError as exc:
            stats.add(rejected=True)
            return _status(3, f"{exc}; nothing of this request was stored", content_type, 400)
        except Exception as exc:
            why = _store_busy(exc)
            if why is None:
                raise
            stats.add(busy=True)
            message = f"the results store is busy ({why}); nothing of this request was stored: send it again"
            return _status(14, message, content_type, 503, {"Retry-After": str(RETRY_AFTER_S)})  # 14: UNAVAILABLE
        stats.add(spans)
        return _reply(ExportTraceServiceResponse(), content_type, 200)

    app = Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])
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
