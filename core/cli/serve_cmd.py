"""``ragassay serve``: the local, read-only results browser (docs/serve.md).

Binds 127.0.0.1 by default. Any other address needs ``--token SECRET`` or ``--token generate`` (a random token,
printed once in the URL to open); without one the command refuses to start (exit 2).
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, db_option, open_results

GENERATE = "generate"


@click.command(
    "serve",
    short_help="Browse the stored runs in a web browser: comparisons, breakdowns, cost, failures, samples, robustness.",
)
@config_option
@db_option
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="The address to bind (non-loopback: needs --token)."
)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="The port to bind.")
@click.option(
    "--token",
    default=None,
    metavar="SECRET",
    help="The access token every request must carry (at least 16 characters), or 'generate' for a random one "
    "printed once. Required for a non-loopback --host.",
)
def serve_command(config_path: Path, db: str | None, host: str, port: int, token: str | None) -> None:
    """Browse the stored runs in a web browser: runs, comparisons with intervals and verdicts, breakdowns,
    cost and latency, the failure browser, each sample with its contexts and judge explanations, robustness.

    Read-only: no page writes to the results database. Every request asks the database for the run's version,
    so a running evaluation's new results show on refresh; pages are prepared in the background (the newest
    runs at start, a viewed run's other pages, a changed run again), so most loads find them ready.
    """
    from ..present.serve.server import check_bind

    if token == GENERATE:
        import secrets

        token = secrets.token_urlsafe(24)
    check_bind(host, token)
    from ..present.serve import create_app, serve_app

    store = open_results(config_path, db)
    try:
        app = create_app(store, token=token)
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
        click.echo(f"ragassay serve: open {url} (Ctrl-C stops)")
        serve_app(app, host, port, token)
    finally:
        store.close()


COMMANDS = [serve_command]
