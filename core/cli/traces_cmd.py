"""``ragassay traces``: production traces in (``import``, ``receive``); their analyses are added to the same group.

The commands parse options, call :mod:`ragassay.traces` and print; they hold no analysis.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import config_option, db_option
from .help_text import ListsWholeSentences

SHOWN_UNMAPPED = 10


@click.group("traces", cls=ListsWholeSentences)
def traces_group() -> None:
    """Production traces: import or receive OTLP traces, then score them with `ragassay run` (docs/traces.md)."""


def open_traces_db(config_path: Path, db: str | None):
    """The results database that holds the traces: --db, else the project's (created when missing)."""
    from ..store import open_store, store_url
    from ..traces import open_traces_store

    if db is not None:
        return open_store(store_url(db, Path.cwd()), create=True, key="--db")
    return open_traces_store(config_path, create=True)[0]


def project_mapping(config_path: Path, db: str | None):
    """The mapping of the project's ``traces`` dataset source, when it has one (default mapping otherwise)."""
    from ..traces import TraceMapping, dataset_mapping

    if db is not None:
        return TraceMapping()
    from ..config import load_config

    loaded = load_config(config_path)
    dataset = loaded.config.dataset
    return dataset_mapping(dataset.source, dataset.options, loaded.where("dataset.options.mapping"))


@traces_group.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@config_option
@db_option
@click.option("--no-check", is_flag=True, help="Skip mapping the imported traces afterwards.")
@click.option(
    "--check-all",
    is_flag=True,
    help="Map every stored trace afterwards, not only those in PATHS (after a mapping change).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the counts as one JSON object.")
def import_command(
    paths: tuple[Path, ...], config_path: Path, db: str | None, no_check: bool, check_all: bool, as_json: bool
) -> None:
    """Store the OTLP traces of PATHS (files or folders): OTLP JSON, the Collector's file exporter output, JSON
    lines of resource spans, protobuf (.pb). Importing the same spans again stores nothing new.

    Afterwards the traces in PATHS (each whole, with spans stored before) are mapped, with the project's
    [dataset] mapping when its source is 'traces', and those that cannot be mapped are counted and listed with
    the reason; --check-all maps every stored trace.
    """
    from ..traces.ingest import import_paths
    from .extras import require_extra

    require_extra("traces", "ragassay traces import")
    mapping = None if no_check else project_mapping(config_path, db)  # a bad mapping stops before the import
    store = open_traces_db(config_path, db)
    try:
        report = import_paths(store, list(paths))
        result = report.as_dict()
        if mapping is not None:
            scope = None if check_all else report.trace_ids
            result.update(check_mapping(store, mapping, scope))
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(result, sort_keys=True))
        return
    click.echo(
        f"imported {result['spans_read']:,} spans from {result['files']} file(s), {result['requests']:,} request(s): "
        f"{result['spans_new']:,} new, {result['spans_already_stored']:,} already stored; "
        f"{result['traces_new']:,} new trace(s), {result['traces_stored']:,} stored in all"
    )
    if "mappable" in result:
        _print_check(result)


CHECK_CHUNK = 2_000  # trace ids read per query when only some traces are mapped


def check_mapping(store, mapping, trace_ids: set[str] | None = None) -> dict:
    """Map the stored traces of ``trace_ids`` (None: every stored trace): how many map, and the ones that do not
    with the reason (the first few)."""
    from ..traces import Unmapped, scan_traces

    if trace_ids is None:
        items = scan_traces(store, mapping=mapping)
    else:
        ordered = sorted(trace_ids)
        chunks = (ordered[i : i + CHECK_CHUNK] for i in range(0, len(ordered), CHECK_CHUNK))
        items = (item for chunk in chunks for item in scan_traces(store, mapping=mapping, trace_ids=chunk))
    mappable, unmapped, shown = 0, 0, []
    for item in items:
        if isinstance(item, Unmapped):
            unmapped += 1
            if len(shown) < SHOWN_UNMAPPED:
                shown.append({"trace_id": item.trace_id, "reason": item.reason})
        else:
            mappable += 1
    scope = "stored" if trace_ids is None else "imported"
    return {"mappable": mappable, "unmappable": unmapped, "unmappable_traces": shown, "checked": scope}


def _print_check(result: dict) -> None:
    scope = "every stored trace" if result["checked"] == "stored" else "the traces in these files"
    click.echo(f"mapping: {result['mappable']:,} trace(s) map to a question and an answer (checked: {scope})")
    if result["unmappable"]:
        click.echo(f"warning: {result['unmappable']:,} stored trace(s) cannot be mapped (left out of runs):", err=True)
        for item in result["unmappable_traces"]:
            click.echo(f"  {item['trace_id']}: {item['reason']}", err=True)
        if result["unmappable"] > len(result["unmappable_traces"]):
            click.echo(f"  and {result['unmappable'] - len(result['unmappable_traces']):,} more", err=True)


@traces_group.command("receive")
@config_option
@db_option
@click.option("--port", type=click.IntRange(0, 65535), default=4318, show_default=True, help="TCP port (0: any).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--allow-remote", is_flag=True, help="Allow a --host other than loopback (other machines can then send traces)."
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=8 * 1024 * 1024,
    show_default=True,
    help="Largest request body accepted (after decompression); bigger ones get 413.",
)
def receive_command(config_path: Path, db: str | None, port: int, host: str, allow_remote: bool, max_bytes: int):
    """Receive OTLP/HTTP traces (POST /v1/traces, JSON or protobuf, gzip allowed) and store them; Ctrl-C stops.

    Point an OpenTelemetry exporter at http://HOST:PORT (OTEL_EXPORTER_OTLP_ENDPOINT). Listens on loopback
    unless --allow-remote is given with another --host.
    """
    from ..errors import ConfigError
    from ..traces.receiver import is_loopback, serve
    from .extras import require_extra
    from .listening import listen, open_url

    require_extra("traces", "ragassay traces receive")
    if not is_loopback(host):
        if not allow_remote:
            raise ConfigError(
                f"--host {host} accepts traces from other machines; add --allow-remote to mean it "
                "(there is no authentication), or keep the default 127.0.0.1"
            )
        click.echo(f"warning: listening on {host}: any machine that reaches it can store traces", err=True)
    sock = listen(host, port)
    store = open_traces_db(config_path, db)

    def started(_server) -> None:
        traces, logs = open_url(host, sock, "/v1/traces"), open_url(host, sock, "/v1/logs")
        click.echo(f"receiving OTLP traces on {traces} and GenAI events on {logs} (Ctrl-C to stop)", err=True)

    try:
        stats = serve(store, host=host, port=port, max_bytes=max_bytes, on_started=started, sock=sock)
    finally:
        store.close()
    records = f", {stats.log_records:,} log record(s) stored" if stats.log_records else ""
    dropped = (
        f", {stats.log_records_dropped:,} log record(s) without a span dropped" if stats.log_records_dropped else ""
    )
    busy = f", {stats.busy:,} answered 503 while the store was busy (sent again by exporters)" if stats.busy else ""
    click.echo(
        f"stopped: {stats.requests:,} request(s), {stats.spans:,} span(s) stored{records}{dropped}, "
        f"{stats.rejected:,} rejected{busy}",
        err=True,
    )


COMMANDS = [traces_group]


def _add_result_commands() -> None:
    """trend, export-evals and testset (:mod:`ragassay.cli.traces_results_cmd`) join the group."""
    from . import traces_results_cmd

    for command in traces_results_cmd.COMMANDS:
        traces_group.add_command(command)


_add_result_commands()
