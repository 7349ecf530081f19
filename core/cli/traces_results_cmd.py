"""``ragassay traces trend|export-evals|testset RUN``: what a run scored from traces gives back (docs/traces.md).

Each reads the run once (:func:`ragassay.results.read_run`) and hands it to one function: the drift windows
(:func:`ragassay.analysis.trend.trend`), the evaluation events (:mod:`ragassay.traces.evaluations`), the
regression test set (:mod:`ragassay.traces.testset`). The commands hold no analysis; they join the
``ragassay traces`` group of :mod:`ragassay.cli.traces_cmd`.
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, open_results, output_format, read_runs
from .file_params import FilePath, folder_given


def _read(config_path: Path, db: str | None, run: str, payloads: bool = False):
    store = open_results(config_path, db, [run])
    try:
        return read_runs(store, [run], payloads=payloads)[0]
    finally:
        store.close()


@click.command("trend")
@click.argument("run")
@config_option
@db_option
@click.option("--by", type=click.Choice(["day", "week"]), default="day", show_default=True, help="Window (UTC).")
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="METRIC",
    help="A metric (or judge:LABEL) to follow; repeat for several (default: every metric and judge of the run).",
)
@click.option(
    "--reference",
    default=None,
    metavar="WINDOW",
    help="The window the others are compared with: 2025-03-04 (--by day) or 2025-W10 (--by week); "
    "default: the first window.",
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Family level of the flags per series.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the bootstrap.")
@format_option
def trend_command(run: str, config_path: Path, db: str | None, fmt: str | None, **options) -> None:
    """Per-window means of RUN (scored from traces) with intervals, and the windows that differ from the reference.

    Windows are UTC days or ISO weeks of each trace's start. A window is flagged higher or lower when the bootstrap
    interval of its difference from the reference window excludes 0 (Bonferroni over the windows of a series).
    """
    from ..analysis.jsonable import jsonable
    from ..analysis.trend import trend
    from ..present.trend_tables import series_tables, trend_table
    from .render import emit

    fmt = output_format(fmt)
    data = _read(config_path, db, run)
    result = trend(data, metrics=list(options.pop("metrics")) or None, **options)
    if fmt == "json":
        emit(console(), [], "json", data={"trend": jsonable(result), "windows": trend_table(result).records()})
    elif fmt == "csv":
        emit(console(), [trend_table(result)], "csv")
    else:
        emit(console(), series_tables(result), fmt)


@click.command("export-evals")
@click.argument("run")
@config_option
@db_option
@click.option(
    "--otlp",
    "target",
    required=True,
    metavar="URL|FILE",
    help="An OTLP/HTTP endpoint (http://host:4318 or .../v1/logs) to send to, or a file to write OTLP JSON to.",
)
@click.option("--timeout", type=float, default=10.0, show_default=True, help="Seconds per request to the endpoint.")
@click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="KEY=VALUE",
    help="An HTTP header for the endpoint (e.g. authorization); repeat for several.",
)
def export_evals_command(run: str, config_path: Path, db: str | None, target: str, timeout: float, headers) -> None:
    """Send every evaluation of RUN back to your tracing backend as OpenTelemetry events.

    One gen_ai.evaluation.result event per trace and metric or judge, on the evaluated span (the span that produced
    the answer), with the score, the judge's label and explanation, and ragassay's provenance. An unscored value is
    sent with its reason as explanation and no score.
    """
    from ..traces.evaluations import evaluations, send, write_json
    from .extras import require_extra

    require_extra("traces", "ragassay traces export-evals")
    url = target.startswith(("http://", "https://"))
    if not url and Path(target).is_dir():
        expected = f"an OTLP/HTTP endpoint (http://...) or a file to write, e.g. {target.rstrip('/')}/evals.json"
        raise folder_given("--otlp", target, expected)
    found = evaluations(_read(config_path, db, run, payloads=True))
    if url:
        count = send(found, target, timeout=timeout, headers=_headers(headers))
        where = target
    else:
        count = write_json(found, Path(target))
        where = f"{target} (OTLP JSON)"
    unscored = f"{found.unscored:,} unscored (sent with their reason, no score)"
    click.echo(f"{count:,} evaluation event(s) of run {found.run_id[:12]} to {where}; {unscored}", err=True)
    if found.skipped:
        first = found.skipped[0]
        click.echo(
            f"warning: {len(found.skipped):,} score(s) not sent, not linked to a span; first: system {first[0]}, "
            f"sample {first[1]}, {first[2]}: {first[3]}",
            err=True,
        )


def _headers(pairs) -> dict[str, str]:
    headers = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"--header {pair!r}: give KEY=VALUE, e.g. --header authorization='Bearer ...'")
        headers[key.strip()] = value
    return headers


@click.command("testset")
@click.argument("run")
@config_option
@db_option
@click.option(
    "--out",
    "out",
    required=True,
    type=FilePath("the JSONL file to write, e.g. {folder}/testset.jsonl"),
    help="The JSONL file to write.",
)
@click.option(
    "--system",
    "systems",
    multiple=True,
    metavar="SYSTEM",
    help="Take candidate answers from this system only; repeat for several (default: every system of RUN).",
)
def testset_command(run: str, config_path: Path, db: str | None, out: Path, systems) -> None:
    """Turn the traces of RUN into a regression test set (JSONL, read by the files dataset source).

    One sample per distinct question (case, punctuation and articles ignored); the answers given become candidate
    reference answers, marked unverified in each sample's metadata: review them before relying on them.
    """
    from ..traces.testset import testset, write_jsonl

    found = testset(_read(config_path, db, run, payloads=True), systems=list(systems) or None)
    write_jsonl(found, out)
    click.echo(
        f"{len(found.records):,} question(s) from {found.samples:,} trace sample(s) of run {found.run_id[:12]} to "
        f"{out} ({found.duplicates:,} repeated question(s) folded); reference answers are unverified candidates",
        err=True,
    )
    if found.without_answer:
        click.echo(f"warning: {found.without_answer:,} question(s) have no candidate answer (no ok output)", err=True)


COMMANDS = [trend_command, export_evals_command, testset_command]
