"""``ragassay traces receive``: an OTLP/HTTP trace receiver (starlette app served by uvicorn).

``POST /v1/traces`` with ``application/json`` or ``application/x-protobuf`` bodies, optionally gzip-encoded, as
the OTLP/HTTP specification defines (https://opentelemetry.io/docs/specs/otlp/#otlphttp), and ``POST /v1/logs``
the same way for the GenAI events that the current semantic conventions send as log records (each record with a
trace and span id is kept for its span and read as one of its events; one without is counted and dropped). A
success is 200 with an ``ExportTraceServiceResponse`` (``ExportLogsServiceResponse``) in the request's encoding;
a malformed payload is 400 with a ``google.rpc.Status`` naming the problem, and nothing of it is stored; a body
over the size limit (before or after decompression) is 413; another content type is 415. Spans of one trace may
arrive in several requests: they are stored by (trace id, span id) and assembled by trace id when read.

A gzip body may hold several members, one after the other (RFC 1952; ``gzip(a) + gzip(b)`` is ``a + b``); bytes
after the last member that are not another member make it a 400. A receiver on a loopback address answers only
requests whose ``Host`` is a loopback name (otherwise 403), so a web page cannot write traces through a DNS name
rebound to 127.0.0.1. A client gets :data:`ragassay.traces.deadline.REQUEST_DEADLINE_S` seconds to send a
request (:mod:`ragassay.traces.deadline`); one that is slower, or goes away mid-body, is disconnected and
counted as rejected, and nothing of its request is stored. When the results store stays busy for
:data:`STORE_WAIT_S` (another writer holds a SQLite file's lock) or is unreachable for a moment, the answer is
503 with ``Retry-After`` (:data:`RETRY_AFTER_S`), which OTLP exporters retry, and nothing of the request is
stored.
"""

from __future__ import annotations

import dataclasses
import threading
import zlib
from typing import Any

from ..errors import DatasetError
from ..hosts import host_name, is_loopback
from .deadline import REQUEST_DEADLINE_S, deadline_protocol
from .ingest import store_log_request, store_request
from .otlp import loads, logs_request_from_bytes, logs_request_from_json, request_from_bytes, request_from_json

JSON, PROTOBUF = "application/json", "application/x-protobuf"
DEFAULT_MAX_BYTES = 8 * 1024 * 1024  # per request, after decompression
LOOPBACK = "127.0.0.1"
JSON_BODY = "send one ExportTraceServiceRequest per request (a gzip body of several members is their concatenation)"
STORE_WAIT_S = 2.0  # the longest a request waits for another writer of the store (exporters time out at 10 s)
RETRY_AFTER_S = 1  # what a 503 asks the exporter to wait before sending the request again


@dataclasses.dataclass
class ReceiverStats:
    """What a receiver has taken in so far."""

    requests: int = 0
    spans: int = 0
    rejected: int = 0
    log_records: int = 0  # kept: each belongs to a span
    log_records_dropped: int = 0  # without a trace and span id: no span to read them with
    busy: int = 0  # answered 503: the store was busy (the exporter sends them again)
    lock: threading.Condition = dataclasses.field(default_factory=threading.Condition, repr=False)

    def add(
        self, spans: int = 0, *, rejected: bool = False, log_records: int = 0, dropped: int = 0, busy: bool = False
    ) -> None:
        with self.lock:
            self.requests += 1
            self.spans += spans
            self.rejected += int(rejected)
            self.log_records += log_records
            self.log_records_dropped += dropped
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
    return gunzip(body, max_bytes)


def gunzip(body: bytes, max_bytes: int) -> bytes:
    """Every member of a gzip ``body``, one after the other (TooLarge past ``max_bytes``); DatasetError for a body
    that cannot be decompressed, a truncated member, or bytes after a member that are not another member."""
    out, size, member, rest = [], 0, 0, body
    while True:
        member += 1
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            part = inflater.decompress(rest, max_bytes - size + 1)
        except zlib.error as exc:
            raise DatasetError(f"gzip member {member} of the body cannot be decompressed: {exc}") from None
        size += len(part)
        if size > max_bytes or inflater.unconsumed_tail:
            raise TooLarge
        if not inflater.eof:
            raise DatasetError(f"gzip member {member} of the body is truncated")
        out.append(part)
        rest = inflater.unused_data
        if not rest:
            return b"".join(out)
        if not rest.startswith(b"\x1f\x8b"):
            raise DatasetError(f"the body has {len(rest):,} bytes after gzip member {member} that are not gzip data")


def _decode(body: bytes, content_type: str, logs: bool = False) -> Any:
    if content_type == PROTOBUF:
        return (logs_request_from_bytes if logs else request_from_bytes)(body, "request")
    return (logs_request_from_json if logs else request_from_json)(loads(body, "request", JSON_BODY), "request")


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


def _busy(exc: Exception, stats: ReceiverStats, content_type: str):
    """503 with ``Retry-After`` when ``exc`` is the store being busy for a moment; any other error is raised."""
    why = _store_busy(exc)
    if why is None:
        raise exc
    stats.add(busy=True)
    message = f"the results store is busy ({why}); nothing of this request was stored: send it again"
    return _status(14, message, content_type, 503, {"Retry-After": str(RETRY_AFTER_S)})  # 14: UNAVAILABLE


def make_app(
    store: Any, *, max_bytes: int = DEFAULT_MAX_BYTES, stats: ReceiverStats | None = None, loopback_only: bool = True
):
    """The starlette application: ``POST /v1/traces`` and ``POST /v1/logs`` into ``store``.

    :param loopback_only: answer only requests whose ``Host`` is a loopback name (a receiver bound to a loopback
        address: a page in a browser cannot write traces through a DNS name rebound to 127.0.0.1); others get 403.
    """
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import ClientDisconnect
    from starlette.routing import Route

    stats = stats if stats is not None else ReceiverStats()

    def endpoint(logs: bool):
        async def receive(request):
            content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
            refusal = _refusal(request, content_type, loopback_only)
            if refusal is not None:
                stats.add(rejected=True)
                return refusal
            write = store_log_request if logs else store_request
            try:
                decoded = _decode(await _body(request, max_bytes), content_type, logs)
                stored = await run_in_threadpool(write, store, decoded, "request", wait_s=STORE_WAIT_S)
            except TooLarge:
                stats.add(rejected=True)
                return _status(8, f"request body over the limit of {max_bytes:,} bytes", content_type, 413)
            except DatasetError as exc:
                stats.add(rejected=True)
                return _status(3, f"{exc}; nothing of this request was stored", content_type, 400)
            except ClientDisconnect:  # went away (or was too slow) mid-body: nobody to answer, nothing stored
                stats.add(rejected=True)
                return _status(1, "the client went away before its body ended; nothing was stored", content_type, 400)
            except Exception as exc:
                return _busy(exc, stats, content_type)
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


def _refusal(request, content_type: str, loopback_only: bool):
    """The answer to a request refused before its body is read (a foreign ``Host``, a content type), or None."""
    if loopback_only and not is_loopback(host_name(request.headers.get("host", ""))):
        message = "this receiver answers only on a loopback host name (start it with --host and --allow-remote)"
        return _status(7, message, JSON, 403)
    if content_type not in (JSON, PROTOBUF):
        return _status(3, f"unsupported Content-Type '{content_type}': send {JSON} or {PROTOBUF}", JSON, 415)
    return None


def _server(store: Any, host: str, port: int, max_bytes: int, stats: ReceiverStats, deadline_s: float):
    """The uvicorn server of a receiver on ``host``: loopback-only Host names on a loopback address, a deadline
    of ``deadline_s`` seconds per request (:mod:`ragassay.traces.deadline`)."""
    import uvicorn

    app = make_app(store, max_bytes=max_bytes, stats=stats, loopback_only=is_loopback(host))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        access_log=False,
        http=deadline_protocol(deadline_s),
    )
    return uvicorn.Server(config)


class Receiver:
    """A receiver served by uvicorn in a background thread (tests, benchmarks, ``ragassay watch``); ``port=0`` picks a
    free port; ``sock``: a socket already bound (:func:`ragassay.cli.listening.listen`).

    with Receiver(store) as receiver:
        post(receiver.url, ...)
    """

    def __init__(
        self,
        store: Any,
        *,
        host: str = LOOPBACK,
        port: int = 0,
        max_bytes: int = DEFAULT_MAX_BYTES,
        deadline_s: float = REQUEST_DEADLINE_S,
        sock: Any = None,
    ):
        self.stats = ReceiverStats()
        self.server = _server(store, host, port, max_bytes, self.stats, deadline_s)
        sockets = None if sock is None else [sock]  # bound first by the caller (a busy port: a one-line error)
        self.thread = threading.Thread(
            target=lambda: self.server.run(sockets=sockets), name="otlp-receiver", daemon=True
        )

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


def serve(
    store: Any,
    *,
    host: str,
    port: int,
    max_bytes: int,
    on_started=None,
    sock=None,
    deadline_s: float = REQUEST_DEADLINE_S,
) -> ReceiverStats:
    """Serve in the foreground until Ctrl-C (uvicorn handles the signal and shuts down cleanly).

    :param on_started: called with the uvicorn server once it listens.
    :param sock: a socket already bound to ``host``:``port`` (``ragassay traces receive`` binds it first, so a
        busy port is a one-line error); None: uvicorn binds ``host``:``port`` itself.
    """
    stats = ReceiverStats()
    server = _server(store, host, port, max_bytes, stats, deadline_s)
    if on_started is not None:
        original = server.startup

        async def startup(sockets=None):
            await original(sockets)
            if server.started:
                on_started(server)

        server.startup = startup
    try:
        server.run(sockets=None if sock is None else [sock])
    except KeyboardInterrupt:  # uvicorn shut down cleanly, then re-raised the signal it captured
        pass
    return stats
