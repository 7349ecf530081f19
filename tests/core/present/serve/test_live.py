"""The app served for real by uvicorn on 127.0.0.1 (a free port): a page over HTTP with the gate's headers, and
the port closed again once the server stops."""

from __future__ import annotations

import socket

import httpx
import pytest

from ragassay.present.serve import create_app

from html_report_helpers import write_planted_run
from serve_helpers import live_server


@pytest.fixture
def planted(tmp_path):
    store, _ = write_planted_run(tmp_path / "results.db")
    yield store
    store.close()


def test_uvicorn_serves_a_page_and_stops(planted):
    with live_server(create_app(planted, token=None)) as url:
        page = httpx.get(f"{url}/runs/planted-run-0001/failures", timeout=60)
        assert page.status_code == 200 and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert httpx.get(f"{url}/static/style.css", timeout=60).status_code == 200
        port = int(url.rsplit(":", 1)[1])
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=5):
        pass
