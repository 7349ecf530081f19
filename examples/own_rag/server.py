"""The toy RAG of my_rag.py behind an HTTP endpoint, as your service would be.

``POST /answer`` with ``{"question": "..."}`` answers
``{"data": {"answer": "...", "sources": [{"id": "corpus/hours.md", "text": "..."}]}}``.
Run it on its own with ``python server.py [PORT]``, or start it in-process with :func:`serve`.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from my_rag import answer


class AnswerHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the http.server method name
        if self.path != "/answer":
            self._reply(404, {"error": f"no route {self.path}"})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        result = answer(body.get("question", ""))
        sources = [{"id": i, "text": t} for i, t in zip(result["context_ids"], result["contexts"], strict=True)]
        self._reply(200, {"data": {"answer": result["answer"], "sources": sources}})

    def _reply(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet: no line per request
        pass


def serve(port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """Start the server on 127.0.0.1 (port 0: any free port) in a daemon thread; returns it and its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", port), AnswerHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


if __name__ == "__main__":
    server, url = serve(int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
    print(f"serving {url}/answer; Ctrl-C to stop")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
