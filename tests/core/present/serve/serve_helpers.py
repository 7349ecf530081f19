"""Helpers of the serve tests (and of the labelling and meta-eval tests built on the app): a TestClient on a
loopback host name (the app answers only those without a token), the app served for real by uvicorn, and a page's
visible text."""

from __future__ import annotations

import contextlib
import html
import re
import threading
import time
from collections.abc import Iterator

LOOPBACK = "http://127.0.0.1"


def client(store, *, token: str | None = None, extra=(), base_url: str = LOOPBACK):
    """A :class:`starlette.testclient.TestClient` of ``create_app(store, token=token, extra=extra)``."""
    from starlette.testclient import TestClient

    from ragassay.present.serve import create_app

    return TestClient(create_app(store, token=token, extra=list(extra)), base_url=base_url)


@contextlib.contextmanager
def live_server(app, *, start_s: float = 120.0) -> Iterator[str]:
    """``app`` served for real by uvicorn on 127.0.0.1 and a free port the system picks, in a thread of this
    process; yields the base URL and stops the server (and its thread) on leaving the block."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="serve-test-uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_s  # generous: only a broken server takes long
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert server.started, "uvicorn did not start"
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=start_s)


def text_of(page: str) -> str:
    """A page's visible text: tags dropped, entities decoded, white space collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
