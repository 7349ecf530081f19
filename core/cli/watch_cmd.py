"""``ragassay watch``: standing rules over incoming traces (docs/watch.md). The command parses the options, hands
them to :func:`ragassay.watch.watch` with the change detection of :mod:`ragassay.analysis.monitor`, and prints; the
exit code gates a scheduled job: 1 when an alarm fired, 0 otherwise, 2 on bad input."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import click

from .common import config_option

EXIT_ALARM = 1


def load_statistics():
    """The change detection the watch feeds (:mod:`ragassay.analysis.monitor`)."""
    from ..analysis import monitor
    from ..watch.detect import Statistics

    return Statistics(monitor.Detector, monitor.Detector.restore, monitor.reference_of, monitor.Observation)


def _instant(value: str | None) -> float | None:
    if value is None:
        return None
    from ..errors import ConfigError

    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"--until {value!r}: not an ISO 8601 date or time, e.g. 2025-03-06T18:00Z") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)).timestamp()


def _source(from_store: bool, from_folder: Path | None, host: str, port: int, allow_remote: bool, max_bytes: int):
    from ..errors import ConfigError
    from ..hosts import is_loopback
    from ..watch.start import Source
    from .listening import listen

    if from_store and from_folder is not None:
        raise ConfigError("--from-store and --from-folder cannot go together: give one source")
    if from_store:
        return Source()
    if from_folder is not None:
        return Source(folder=from_folder)
    if not is_loopback(host) and not allow_remote:
        raise ConfigError(f"--host {host} accepts traces from other machines; add --allow-remote to mean it")
    return Source(sock=listen(host, port), host=host, max_bytes=max_bytes)


def _say(line: str) -> None:
    from ..text import terminal_safe

    click.echo(terminal_safe(line), err=True)


def _opened(source, host: str):
    def opened(report) -> None:
        state = "resumed" if report.resumed else "started"
        if source.sock is not None:
            from .listening import open_url

            where = f"receiving OTLP traces on {open_url(host, source.sock, '/v1/traces')}"
        elif source.folder is not None:
            where = f"importing the OTLP files of {source.folder}"
        else:
            where = "tailing the stored traces"
        _say(f"watch {state} (run {report.run_id}): {where} (Ctrl-C to stop)")

    return opened


def _print_report(report, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.as_dict(), sort_keys=True, default=str))
        return
    decided = ", ".join(f"{n} {status}" for status, n in sorted(report.decided.items())) or "none"
    _say(f"watch stopped (run {report.run_id}): this session decided on {report.count} trace(s): {decided}")
    unscored = report.decided.get("unscored", 0)
    if unscored:
        _say(f"  {unscored} trace(s) unscored: budget (the judge budget refused their calls; counted, not dropped)")
    spend = report.budget
    if spend.get("limits"):
        hour, day = spend["last_hour"], spend["last_day"]
        _say(
            f"  judge spend: {hour['calls']} call(s), {hour['usd']} USD in the last hour; {day['calls']} call(s), "
            f"{day['usd']} USD in the last day (limits: {spend['limits']})"
        )
    _say(f"  alarms this session: {len(report.alarms)}")
    for note in report.notes:
        _say(f"  {note}")


@click.command("watch")
@config_option
@click.option("--from-store", is_flag=True, help="Tail the stored traces table (another receiver fills it).")
@click.option(
    "--from-folder", type=click.Path(path_type=Path, file_okay=False), default=None, help="Import new OTLP files."
)
@click.option("--port", type=click.IntRange(0, 65535), default=4318, show_default=True, help="Receiver port (0: any).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Receiver address.")
@click.option("--allow-remote", is_flag=True, help="Allow a --host other than loopback.")
@click.option("--max-bytes", type=click.IntRange(min=1), default=8 * 1024 * 1024, help="Largest request body.")
@click.option("--until", "until", default=None, help="Stop at this time (ISO 8601, UTC unless an offset is given).")
@click.option("--for", "for_s", type=click.FloatRange(min=0), default=None, help="Stop after this many seconds.")
@click.option("--traces", "traces", type=click.IntRange(min=1), default=None, help="Stop after deciding N traces.")
@click.option("--name", default=None, help="The watch's name ([watch] name).")
@click.option("--metric", "metrics", multiple=True, help="A metric to watch (repeatable; replaces [watch] metrics).")
@click.option("--sample", default=None, help="Watch a hashed subset, e.g. 5%.")
@click.option("--where", multiple=True, help="KEY=VALUE filter on a mapped field or attribute (repeatable).")
@click.option(
    "--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=None, help="False-alarm bound."
)
@click.option("--reference-run", default=None, help="Reference: a stored run's mean per metric.")
@click.option("--target", multiple=True, help="Reference: METRIC=VALUE (repeatable).")
@click.option("--margin", type=click.FloatRange(min=0), default=None, help="A change smaller than this is no alarm.")
@click.option("--budget", "budget", default=None, help="Judge budget, e.g. calls_per_hour=100,usd_per_day=5.")
@click.option("--version-key", "version_keys", multiple=True, help="Attribute an alarm names (repeatable).")
@click.option("--quiet-s", type=click.FloatRange(min=0), default=None, help="Seconds without a new span: complete.")
@click.option("--webhook", default=None, help="POST each alarm as JSON to this URL.")
@click.option("--jsonl", default=None, help="Append each alarm to this JSON-lines file.")
@click.option("--otlp", default=None, help="Send evaluations (and alarms) as OTLP events to this endpoint.")
@click.option("--json", "as_json", is_flag=True, help="Print the session's report as one JSON object on stdout.")
def watch_command(config_path: Path, from_store, from_folder, port, host, allow_remote, max_bytes, until, for_s,
                  traces, as_json, **overrides) -> None:  # fmt: skip
    """Watch incoming traces: score each complete trace as it arrives, within a judge budget, and raise an alarm
    when a metric changes (false alarms bounded by alpha however long it watches); exit 1 when an alarm fired."""
    from ..engine.project import Project
    from ..watch.loop import StopRule
    from ..watch.overrides import parse_pairs, with_overrides
    from ..watch.start import watch
    from .extras import require_extra

    require_extra("traces", "ragassay watch")
    project = Project.load(config_path)
    overrides["where"] = parse_pairs(overrides["where"], "--where", "service.version=2")
    overrides["target"] = parse_pairs(overrides["target"], "--target", "k_precision=0.9")
    overrides["budget"] = parse_pairs(
        [overrides["budget"]] if overrides["budget"] else [], "--budget", "calls_per_hour=100"
    )
    rules = with_overrides(project.config.watch, overrides)
    stop = StopRule(until=_instant(until), seconds=for_s, traces=traces)
    statistics = load_statistics()
    source = _source(from_store, from_folder, host, port, allow_remote, max_bytes)
    report = watch(project, statistics, rules=rules, source=source, stop=stop, say=_say, on_open=_opened(source, host))
    _print_report(report, as_json)
    if report.alarms:
        raise SystemExit(EXIT_ALARM)


COMMANDS = [watch_command]
