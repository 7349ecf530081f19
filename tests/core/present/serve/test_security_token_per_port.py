"""The gate of the serve app as a browser meets it: two apps on two ports of one host each keep their own token
cookie (a browser sends a host's cookies to all its ports), an empty ``?token=`` leaves the cookie alone, and the
short loopback forms (``127.1``) are loopback."""

from __future__ import annotations

import contextlib
import threading

import httpx
import pytest

from ragassay.present.serve import create_app
from ragassay.present.serve.security import is_loopback
from ragassay.present.serve.server import check_bind
from ragassay.store import open_store
from ragassay.traces import receiver

TOKEN_A = "token-of-serve-0123456789"
TOKEN_B = "token-of-label-0123456789"


@pytest.fixture
def store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'results.db'}")
    yield store
    store.close()


@contextlib.contextmanager
def served(app):
    """``app`` served by uvicorn on 127.0.0.1 and a free port, in a thread; yields its base URL."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:  # started, or the thread ended (then the assertion below says so)
            assert thread.is_alive(), "uvicorn did not start"
            thread.join(0.01)
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(60)


def test_two_apps_on_two_ports_of_one_host_keep_their_own_token(store):
    app_a = create_app(store, token=TOKEN_A, prepare=False)
    app_b = create_app(store, token=TOKEN_B, prepare=False)
    with served(app_a) as a, served(app_b) as b, httpx.Client(timeout=60) as browser:
        assert browser.get(f"{a}/?token={TOKEN_A}", follow_redirects=True).status_code == 200
        assert browser.get(f"{b}/?token={TOKEN_B}", follow_redirects=True).status_code == 200
        assert browser.get(f"{a}/").status_code == 200  # the cookie of b did not replace a's
        assert browser.get(f"{b}/").status_code == 200
        assert sorted(cookie.name for cookie in browser.cookies.jar) == sorted(
            f"ragassay_token_{url.rsplit(':', 1)[1]}" for url in (a, b)
        )


def test_an_empty_token_in_the_url_keeps_the_cookie(store):
    with served(create_app(store, token=TOKEN_A, prepare=False)) as a, httpx.Client(timeout=60) as browser:
        assert browser.get(f"{a}/?token={TOKEN_A}", follow_redirects=True).status_code == 200
        moved = browser.get(f"{a}/?token=&x=1")
        assert moved.status_code == 303 and moved.headers["location"] == "/?x=1"
        assert "set-cookie" not in moved.headers
        assert browser.get(f"{a}/").status_code == 200
        assert httpx.get(f"{a}/?token=", timeout=60).status_code == 403  # no cookie: an empty token is none


@pytest.mark.parametrize("is_loopback_of", [is_loopback, receiver.is_loopback], ids=["serve", "receiver"])
@pytest.mark.parametrize(
    "host, loopback",
    [("127.1", True), ("127.0.0.1", True), ("2130706433", True), ("[::1]", True), ("LOCALHOST", True),
     ("128.1", False), ("0.0.0.0", False), ("127.0.0.1 evil.example", False), ("evil.example", False), ("", False)],
)  # fmt: skip
def test_loopback_addresses_in_every_form_the_system_reads(is_loopback_of, host, loopback):
    assert is_loopback_of(host) is loopback


def test_a_short_loopback_host_needs_no_token():
    check_bind("127.1", None)
