"""A threaded JSON HTTP server on 127.0.0.1 with scripted routes; stops when its context exits. It records
every request (with its arrival time) and counts the requests in flight (``in_flight``, ``peak_in_flight``).

def chat(request):                 # request: Request(method, path, headers, json)
    return Reply(200, {"ok": True})

with JSONServer({("POST", "/v1/chat/completions"): chat}) as server:
    client = OpenAI(base_url=server.url + "/v1", api_key="test")
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclasses.dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    json: Any
    raw: bytes
    received_at: float = 0.0  # time.monotonic() when the request arrived


@dataclasses.dataclass
class Reply:
    """A scripted reply: status, JSON body (or raw bytes), headers, an optional delay before answering."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    delay_s: float = 0.0
    raw: bytes | None = None  # sent as-is instead of body (malformed JSON, truncated streams)
    chunks: Iterable[bytes] | None = None  # streamed with chunked transfer encoding (server-sent events)
    chunk_delay_s: float = 0.0  # pause before each chunk (a body trickled in slowly)


Route = Callable[[Request], Reply]


class _LoopbackHTTPServer(ThreadingHTTPServer):
    """Serves many concurrent clients promptly: a deep accept backlog (socketserver's default is 5), and
    TCP_NODELAY on every connection (headers and body are separate writes; with Nagle's algorithm the body
    waits for the client's delayed ACK, adding ~40 ms to every reply)."""

    request_queue_size = 256
    daemon_threads = True

    def get_request(self):
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address


class JSONServer:
    """Serve ``routes`` ({(method, path): handler}) on a free loopback port; records every request."""

    def __init__(self, routes: dict[tuple[str, str], Route]):
        self.routes = routes
        self.requests: list[Request] = []
        self.in_flight = 0  # requests received and not yet answered
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._server = _LoopbackHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def reset_peak(self) -> None:
        """Start counting ``peak_in_flight`` afresh (from the requests in flight now)."""
        with self._lock:
            self.peak_in_flight = self.in_flight

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def __enter__(self) -> JSONServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _handle(self) -> None:
                server._enter()
                try:
                    reply = self._reply()
                finally:
                    server._leave()  # before the reply goes out: the client cannot be done before this
                self._send(reply)

            def _reply(self) -> Reply:
                received_at = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    payload = json.loads(raw) if raw else None
                except ValueError:
                    payload = None
                path = self.path.split("?", 1)[0]
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Request(self.command, path, headers, payload, raw, received_at)
                with server._lock:
                    server.requests.append(request)
                route = server.routes.get((self.command, path))
                reply = route(request) if route else Reply(404, {"error": {"message": f"no route {path}"}})
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                return reply

            def _send(self, reply: Reply) -> None:
                try:
                    if reply.chunks is not None:
                        self.send_response(reply.status)
                        self.send_header("Content-Type", reply.headers.get("Content-Type", "text/event-stream"))
                        self.send_header("Transfer-Encoding", "chunked")
                        for key, value in reply.headers.items():
                            if key != "Content-Type":
                                self.send_header(key, value)
                        self.end_headers()
                        for chunk in reply.chunks:
                            if reply.chunk_delay_s:
                                time.sleep(reply.chunk_delay_s)
                            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.write(b"0\r\n\r\n")
                        return
                    body = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeouts): fine

            do_POST = do_GET = _handle

        return Handler
