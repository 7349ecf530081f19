"""A loopback HTTP endpoint for the ``http`` adapter that answers most questions well and a few with hostility.

Well-behaved answers are the precomputed ones of :mod:`fault_harness` (so a run against it is comparable to a
clean run). With ``hostile=True`` the questions of :data:`HOSTILE` get instead: a body that declares 20 MiB, an
endless chunked body, a body trickled one byte at a time, or no response at all. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fault_harness import DOCS, answer_of

HOSTILE = {"q0100": "huge", "q0700": "endless", "q1300": "trickle", "q1900": "silent"}
TRICKLE_EVERY_S = 0.2


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the adapter opens `concurrency` connections at once: none may wait for a SYN retry


class HostileEndpoint:
    """``with HostileEndpoint(hostile=True) as endpoint: endpoint.url``: a threaded loopback server."""

    def __init__(self, *, hostile: bool):
        self.hostile = hostile
        self.stopping = threading.Event()
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/answer"

    def __enter__(self) -> HostileEndpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()  # ends the silent and trickling replies still open
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: the adapter reuses its connections
            disable_nagle_algorithm = True  # headers and body are two writes: no delayed-ACK stall between

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                qid = request["question_id"]
                kind = HOSTILE.get(qid) if endpoint.hostile else None
                try:
                    getattr(self, f"_{kind}" if kind else "_answer")(qid)
                except (BrokenPipeError, ConnectionResetError):  # the adapter gave up on it, as it should
                    self.close_connection = True

            def _answer(self, qid: str) -> None:
                i = int(qid[1:])
                fact = f"Item number {i} in the catalogue has value {i * 7 % 1000}."
                body = {"answer": answer_of(i), "contexts": [fact], "context_ids": [f"corpus/doc{i % DOCS}.txt"]}
                self._send(json.dumps(body).encode())

            def _send(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _huge(self, qid: str) -> None:
                self._send(b" " * (20 << 20))

            def _endless(self, qid: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b" " * 65536
                while not endpoint.stopping.is_set():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))

            def _trickle(self, qid: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000")
                self.end_headers()
                while not endpoint.stopping.wait(TRICKLE_EVERY_S):
                    self.wfile.write(b" ")
                    self.wfile.flush()

            def _silent(self, qid: str) -> None:
                endpoint.stopping.wait(300)
                self.close_connection = True

        return Handler


def http_systems(url: str, *, timeout_s: float, max_bytes: int = 65536) -> str:
    """The ``[systems]`` of a project whose one system is the ``http`` adapter on ``url``."""
    return (
        "[systems.api]\n"
        f'rag = {{ name = "http", options = {{ url = "{url}", timeout_s = {timeout_s}, max_bytes = {max_bytes}, '
        'retries = 0, request = { question_id = "{question_id}", question = "{question}" }, '
        'response = { answer = "answer", contexts = "contexts", context_ids = "context_ids" } } }\n'
    )
