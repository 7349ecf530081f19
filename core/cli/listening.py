"""The port of a command that serves (``serve``, ``label``, ``traces receive``): bound before the command says where
to connect, so a busy port or an address this machine does not have is one line (exit 2) and ``--port 0`` shows
the port the system chose; and the address a person opens, without echoing a secret they gave.

The access token of ``serve`` and ``label`` comes from ``--token``, ``--token-file`` or ``RAGASSAY_TOKEN``
(:func:`token_options`, :func:`chosen_token`): a secret on the command line is readable by every local user.
"""

from __future__ import annotations

import socket
from pathlib import Path

import click

from ..errors import ConfigError

GENERATE = "generate"
TOKEN_VARIABLE = "RAGASSAY_TOKEN"
WILDCARDS = {"0.0.0.0", "::", ""}
BACKLOG = 2048  # uvicorn's


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host``:``port``, for uvicorn to serve; :class:`ragassay.errors.ConfigError` when
    the port is taken or the address is not one of this machine's."""
    import errno

    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # as uvicorn binds a host
    try:
        address = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)[0][4]
    except socket.gaierror as exc:
        raise ConfigError(
            f"--host {host}: not an address of this machine ({exc.strerror}); give an IP address"
        ) from exc
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart may rebind a port in TIME_WAIT (as uvicorn)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {host} is in use by another program: stop it, or give another --port (0: any free one)"
            ) from None
        raise ConfigError(f"cannot listen on {host} port {port}: {exc.strerror or exc}") from None
    sock.listen(BACKLOG)  # connections wait from now on, while the server starts
    return sock


def bound_port(sock: socket.socket) -> int:
    """The port ``sock`` is bound to (the one the system chose for ``--port 0``)."""
    return sock.getsockname()[1]


def open_url(host: str, sock: socket.socket, path: str = "/", token: str | None = None, generated: bool = False) -> str:
    """The URL to open for the app on ``sock``: this machine's name for a wildcard ``host`` (0.0.0.0 is not an
    address to open). With a ``token``: ``?token=`` and the token when ragassay ``generated`` it (it is shown once,
    here), else ``?token=<your-token>`` (a secret the user chose is not echoed into scrollback and logs)."""
    shown = socket.gethostname() if host.strip("[]") in WILDCARDS else host.strip("[]")
    shown = f"[{shown}]" if ":" in shown else shown
    query = "" if not token else f"?token={token}" if generated else "?token=<your-token>"
    return f"http://{shown}:{bound_port(sock)}{path}{query}"


def token_options(command):
    """``--token SECRET|generate`` (also ``RAGASSAY_TOKEN``) and ``--token-file PATH`` of ``serve`` and ``label``."""
    command = click.option(
        "--token-file",
        default=None,
        type=click.Path(dir_okay=False, path_type=Path),
        help="Read the access token from the first line of this file (instead of --token).",
    )(command)
    return click.option(
        "--token",
        default=None,
        metavar="SECRET",
        envvar=TOKEN_VARIABLE,
        help=f"The access token every request must carry (at least 16 characters; also read from ${TOKEN_VARIABLE}, "
        "or use --token-file), or 'generate' for a random one printed once. Required for a non-loopback --host.",
    )(command)


def chosen_token(token: str | None, token_file: Path | None) -> tuple[str | None, bool]:
    """The token of ``--token`` / ``$RAGASSAY_TOKEN`` or ``--token-file``, and whether ragassay generated it (then
    the URL printed carries it: it is shown once, there)."""
    if token is not None and token_file is not None:
        raise click.UsageError("give the access token once: --token (or $RAGASSAY_TOKEN) or --token-file")
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--token-file {token_file}: cannot read it ({exc})") from None
        token = lines[0].strip() if lines else ""
        if not token:
            raise ConfigError(f"--token-file {token_file}: the first line is empty; write the token there")
    if token == GENERATE:
        import secrets

        return secrets.token_urlsafe(24), True
    return token, False
