"""Helpers of the serve tests (and of the labelling and meta-eval tests built on the app): a TestClient on a
loopback host name (the app answers only those without a token)."""

from __future__ import annotations

LOOPBACK = "http://127.0.0.1"


def client(store, *, token: str | None = None, extra=(), base_url: str = LOOPBACK):
    """A :class:`starlette.testclient.TestClient` of ``create_app(store, token=token, extra=extra)``."""
    from starlette.testclient import TestClient

    from ragassay.serve import create_app

    return TestClient(create_app(store, token=token, extra=list(extra)), base_url=base_url)
