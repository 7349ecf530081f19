"""``ragassay serve``: the local, read-only results browser (docs/serve.md).

Binds 127.0.0.1 by default. Any other address needs an access token (``--token SECRET``, ``--token-file``,
``$RAGASSAY_TOKEN`` or ``--token generate``: a random token, printed once in the URL to open); without one the
command refuses to start (exit 2). The port is bound before the URL is printed (:mod:`ragassay.cli.listening`).
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, db_option, open_results
from .listening import token_options


@click.command(
    "serve",
    short_help="Browse the stored runs in a web browser: comparisons, breakdowns, cost, failures, samples, robustness.",
)
@config_option
@db_option
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="The address to bind (non-loopback: needs --token)."
)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="The port (0: any free).")
@token_options
def serve_command(
    config_path: Path, db: str | None, host: str, port: int, token: str | None, token_file: Path | None
) -> None:
    """Browse the stored runs in a web browser: runs, comparisons with intervals and verdicts, breakdowns,
    cost and latency, the failure browser, each sample with its contexts and judge explanations, robustness.

    Read-only: no page writes to the results database. Every request asks the database for the run's version,
    so a running evaluation's new results show on refresh; pages are prepared in the background (the newest
    runs at start, a viewed run's other pages, a changed run again), so most loads find them ready.
    """
    from .extras import require_extra
    from .listening import chosen_token, listen, open_url

    require_extra("serve", "ragassay serve")
    token, generated = chosen_token(token, token_file)
    from ..present.serve.server import check_bind

    check_bind(host, token)
    from ..present.serve import create_app, serve_app

    store = open_results(config_path, db)
    try:
        app = create_app(store, token=token)
        sock = listen(host, port)
        click.echo(f"ragassay serve: open {open_url(host, sock, '/', token, generated)} (Ctrl-C stops)")
        serve_app(app, host, port, token, sock=sock)
    finally:
        store.close()


COMMANDS = [serve_command]
