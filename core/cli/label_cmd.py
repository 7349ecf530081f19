"""``ragassay label``: label a stored run's answers by hand, blind, in the browser (docs/labelling.md).

Starts the ``ragassay serve`` app with only the labelling queue on 127.0.0.1 and prints the URL to open. The
labels go into the results store as they are given; stop with Ctrl-C and start again to resume. A label the store
cannot take when it is given is kept and stored later; one still not stored when the command stops is written to
a JSONL file to import (its name is printed).
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, db_option, get_run, label_store, open_results
from .listening import token_options


def _systems(_ctx, _param, value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise click.BadParameter("give system names separated by commas, e.g. --systems base,tuned")
    return names


@click.command("label")
@click.argument("run")
@config_option
@db_option
@click.option(
    "--rubric",
    required=True,
    help="correct (binary), faithful (1-5), preference (pairwise, -2..2) or a rubric TOML file.",
)
@click.option("--annotator", required=True, help="Your name or pseudonym, stored with every label.")
@click.option("--sample", type=click.IntRange(min=1), default=None, help="Label N items (default: all).")
@click.option("--seed", type=int, default=0, show_default=True, help="Chooses and orders the items (share it).")
@click.option("--systems", callback=_systems, default=None, help="Systems to label, A,B (default: all; pairwise: two).")
@click.option(
    "--order",
    type=click.Choice(["random", "active"]),
    default="random",
    show_default=True,
    help="random: the first N of a seeded shuffle. active: draw about N items (--sample), more often where the "
    "judges are unsure, each with its probability stored (docs/labelling.md).",
)
@click.option(
    "--judge",
    "judges",
    multiple=True,
    help="--order active: the judge whose scores measure its uncertainty (repeatable; default: every judge).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to bind (non-loopback: --token).")
@click.option("--port", default=8001, show_default=True, type=click.IntRange(0, 65535), help="The port (0: any free).")
@token_options
def label_command(
    run: str,
    config_path: Path,
    db: str | None,
    rubric: str,
    annotator: str,
    sample: int | None,
    seed: int,
    systems: list[str] | None,
    order: str,
    judges: tuple[str, ...],
    host: str,
    port: int,
    token: str | None,
    token_file: Path | None,
) -> None:
    """Label RUN's answers in the browser, one at a time, without the system names or the judges' verdicts.

    Every annotator given the same --sample and --seed labels the same items in the same order. Keys: the
    number keys give the rubric's values, s skips, u undoes the last label, ? shows the keys.
    """
    from ..labels import load_rubric
    from ..labels.queue import run_items
    from ..present.serve import serve_app
    from ..present.serve.label_app import LabelQueue, labelling_app
    from ..present.serve.server import check_bind
    from ..results import read_run
    from .extras import require_extra
    from .listening import chosen_token, listen, open_url

    require_extra("label", "ragassay label")
    token, generated = chosen_token(token, token_file)
    check_bind(host, token)
    scale = load_rubric(rubric)
    if not annotator.strip():
        raise click.BadParameter("give a name", param_hint="--annotator")
    if order == "active" and sample is None:
        raise click.BadParameter("--order active needs --sample N, the label budget", param_hint="--sample")
    if judges and order != "active":
        raise click.BadParameter(
            "--judge chooses the scores of --order active; add --order active", param_hint="--judge"
        )
    store = open_results(config_path, db, [run])
    try:
        run_id = get_run(store, run)["id"]
        items = run_items(
            read_run(store, run_id),
            scale,
            sample=sample,
            seed=seed,
            systems=systems,
            order=order,
            judges=list(judges) or None,
        )
        if not items:
            raise click.ClickException(f"run {run_id[:12]} has no answered output to label with rubric {scale.name}")
        queue = LabelQueue(label_store(store), run_id, scale, annotator.strip(), items)
        state = queue.state()
        if sample is not None and sample > len(items):
            click.echo(f"warning: --sample {sample}, but the run has only {len(items)} items to label; all are queued")
        sock = listen(host, port)
        click.echo(
            f"ragassay label: {len(items)} items of run {run_id[:12]} (rubric {scale.name} v{scale.version}, "
            f"seed {seed}) for {queue.annotator}; {state.done} labelled already."
        )
        if order == "active":
            click.echo(
                f"active order: {len(items)} items drawn for a budget of {sample}, each with its probability "
                "(stored with its label); label all of them for unbiased estimates"
            )
        url = open_url(host, sock, "/label", token, generated)
        click.echo(f"open {url} (Ctrl-C stops; labels are stored as you go)")
        try:
            serve_app(labelling_app(queue, token=token), host, port, token, sock=sock)
        finally:
            _keep_pending(queue)
    finally:
        store.close()


def _keep_pending(queue) -> None:
    """Store the labels the store could not take while serving; what still cannot be stored goes to a JSONL file
    in the current folder, named with the command that imports it."""
    kept = queue.close(Path.cwd())
    if kept is not None:
        click.echo(
            f"warning: {len(queue.pending)} label(s) could not be stored ({queue.unstored}); they are kept in {kept}: "
            f"import them with: ragassay labels import {kept}",
            err=True,
        )


COMMANDS = [label_command]
