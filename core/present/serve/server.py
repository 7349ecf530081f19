"""Serving the app with uvicorn: loopback by default, never a non-loopback address without a token."""

from __future__ import annotations

from ...errors import ConfigError
from .security import is_loopback

MIN_TOKEN_CHARS = 16


def check_bind(host: str, token: str | None) -> None:
    """Refuse (:class:`ragassay.errors.ConfigError`) a non-loopback ``host`` without a ``token``, and a token
    too short to guess hard."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"--token is {len(token)} characters; give at least {MIN_TOKEN_CHARS} "
            "(or --token generate for a random one)"
        )
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"--host {host} would show the results to every machine that can reach it; give --token SECRET "
            "(or --token generate) so only people with the token can open the pages, or bind 127.0.0.1"
        )


def serve_app(app, host: str, port: int, token: str | None, *, sock=None) -> None:
    """Serve ``app`` (made by :func:`ragassay.present.serve.create_app` with the same ``token``) on ``host``:``port``
    until interrupted (Ctrl-C returns); refuses a non-loopback host without a token (:func:`check_bind`).

    :param sock: a socket already bound to ``host``:``port`` (``ragassay serve`` binds it first, so a busy port is
        a one-line error before the URL is printed); None: uvicorn binds ``host``:``port`` itself.
    """
    check_bind(host, token)
    if getattr(app.state, "token", None) != token:
        raise ValueError("serve_app: the app was made with another token than the one given")
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", server_header=False, access_log=False)
    try:
        uvicorn.Server(config).run(sockets=None if sock is None else [sock])
    except KeyboardInterrupt:  # uvicorn shut down cleanly, then re-raised the signal it captured
        pass
