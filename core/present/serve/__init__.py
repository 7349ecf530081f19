"""``ragassay serve``: a local, read-only results browser over a results store (docs/serve.md).

A Starlette app with server-rendered Jinja2 templates (autoescaped); the static HTML report
(:mod:`ragassay.present.html_report`) renders the same templates, so both show one page design. Every asset (CSS, JS)
ships in this package: nothing is fetched from anywhere.

::

    from ragassay.present.serve import create_app, serve_app
    from ragassay.store import open_store

    app = create_app(open_store("sqlite:///ragassay-results.db", create=False), token=None)
    serve_app(app, "127.0.0.1", 8000, token=None)   # a non-loopback host needs a token

For a plugin or another part of ragassay adding pages: ``create_app(store, token=..., extra=[Route(...)])`` mounts
the routes behind the same token check; their endpoints answer with :func:`render`.

The names below are imported on first use (Starlette and uvicorn only when an app is made), so
``ragassay.present.templating`` (Jinja2 only) serves the HTML report without them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "render", "serve_app", "environment"]

_WHERE = {"create_app": "app", "serve_app": "server", "render": "templating", "environment": "templating"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'ragassay.present.serve' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
