"""The Starlette app of ``ragassay serve``: the pages (:mod:`.pages`), the shipped assets, the gate
(:mod:`.security`) and error pages.

Every request asks the store for the run's version first and reuses what it kept only for that version
(:mod:`.cache`), so the pages of a running evaluation show its new results on refresh; while the app runs, a
background thread prepares pages before they are asked for (:mod:`.prepare`). No route of the app
writes to the store; routes given in ``extra`` (the labelling workflow) are the only ones that may, and must
check a CSRF token themselves.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from ..templating import STATIC, render


def create_app(store, *, token: str | None, extra: Sequence = (), prepare: bool = True, host=None):
    """The app over ``store`` (a :class:`ragassay.store.protocols.ResultsReader`).

    :param token: the access token every request must carry (see :mod:`ragassay.present.serve.security`); None: no
        token, and only loopback host names are answered.
    :param extra: more :class:`starlette.routing.BaseRoute` objects, mounted before the built-in pages behind
        the same gate; their endpoints see the store as ``request.app.state.store``.
    :param prepare: prepare pages in a background thread while the app runs (:mod:`ragassay.present.serve.prepare`):
        it starts with the app's lifespan (uvicorn, or a TestClient used as a context manager) and stops with it.
    :param host: the :class:`ragassay.plugin_manager.PluginHost` whose ``register_sections`` make the run pages
        (ragassay's own, then each plugin's; :mod:`ragassay.present.sections.registered`); default: the
        process-wide one.
    """
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    from ...errors import RagassayError
    from ..sections.registered import Sections
    from .cache import RunCache
    from .pages import ROUTES
    from .prepare import Preparer
    from .security import Gate

    routes = [*extra, *ROUTES, Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static")]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Gate, token=token)],
        exception_handlers={HTTPException: _http_error, RagassayError: _ragassay_error},
        lifespan=_lifespan,
    )
    app.state.store = store
    app.state.runs = RunCache(store)  # each run read once per version (ragassay.present.serve.cache)
    app.state.sections = Sections.of(host)  # the pages' sections, taken from the plugins on first use
    app.state.preparer = Preparer(app.state.runs, sections=app.state.sections) if prepare else None
    app.state.token = token
    return app


@contextlib.asynccontextmanager
async def _lifespan(app):
    """The preparer's thread runs while the app does."""
    preparer = app.state.preparer
    if preparer is not None:
        preparer.start()
    try:
        yield
    finally:
        if preparer is not None:
            import anyio.to_thread

            await anyio.to_thread.run_sync(preparer.stop)


async def _http_error(request, exc):
    return render(request, "error.html", status_code=exc.status_code, title=f"{exc.status_code}", message=exc.detail)


async def _ragassay_error(request, exc):
    from ...errors import StoreError, StoreUnavailableError

    if isinstance(exc, StoreUnavailableError):  # the database, not the page: try again soon
        response = render(request, "error.html", status_code=503, title="503", message=str(exc))
        response.headers["Retry-After"] = "5"
        return response
    status = 404 if isinstance(exc, StoreError) else 400
    return render(request, "error.html", status_code=status, title=f"{status}", message=str(exc))
