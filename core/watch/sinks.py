"""Where alarms go: a line on stderr, a JSON line in a file, a webhook (POST JSON, bounded retries with backoff, a
timeout per attempt) and an OTLP ``ragassay.watch.alarm`` event. A sink that fails is said on stderr and recorded
on the alarm (``sinks``: what reached where); it never stops the watch, and the alarm stays undelivered: the next
session sends it again to the sinks it did not reach (:meth:`ragassay.watch.WatchSession.redeliver`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config.watch import WatchSinks

ALARM_EVENT = "ragassay.watch.alarm"
BACKOFF_S = 0.5


class Sinks:
    """The configured sinks; :meth:`deliver` sends one alarm record to each."""

    def __init__(
        self,
        settings: WatchSinks,
        *,
        base_dir: Path,
        say: Callable[[str], None],
        otlp: str | None = None,
        otlp_headers: dict[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.settings = settings
        self.say = say
        self.jsonl = None if settings.jsonl is None else base_dir / settings.jsonl
        self.otlp = otlp if settings.otlp else None
        self.otlp_headers = otlp_headers or {}
        self.sleep = sleep

    def deliver(self, record: dict[str, Any], only: set[str] | None = None) -> dict[str, str]:
        """Send ``record`` to every sink (``only``: to these); sink -> "ok" or why it failed."""
        outcome: dict[str, str] = {}
        wanted = lambda sink: only is None or sink in only  # noqa: E731
        if self.settings.stderr and wanted("stderr"):
            self.say(record["text"])
            outcome["stderr"] = "ok"
        if self.jsonl is not None and wanted("jsonl"):
            outcome["jsonl"] = self._append(record)
        if self.settings.webhook and wanted("webhook"):
            outcome["webhook"] = self._post(record)
        if self.otlp and wanted("otlp"):
            outcome["otlp"] = self._event(record)
        for sink, result in outcome.items():
            if result != "ok":
                self.say(f"warning: the alarm did not reach the {sink} sink: {result}")
        return outcome

    def _append(self, record: dict[str, Any]) -> str:
        try:
            self.jsonl.parent.mkdir(parents=True, exist_ok=True)
            with self.jsonl.open("a", encoding="utf-8") as out:
                out.write(json.dumps(_sent(record), ensure_ascii=False) + "\n")  # suspects stay first
        except OSError as exc:
            return f"{self.jsonl}: {exc}"
        return "ok"

    def _post(self, record: dict[str, Any]) -> str:
        """POST with up to ``webhook_retries`` retries (a connection error, a timeout, a 5xx or 429), waiting
        0.5 s, 1 s, 2 s, ... between attempts; a 4xx other than 429 is not retried."""
        import httpx

        settings, problem = self.settings, ""
        for attempt in range(settings.webhook_retries + 1):
            if attempt:
                self.sleep(BACKOFF_S * 2 ** (attempt - 1))
            try:
                reply = httpx.post(settings.webhook, json=_sent(record), timeout=settings.webhook_timeout_s)
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                continue
            if reply.status_code < 300:
                return "ok"
            problem = f"HTTP {reply.status_code}"
            if reply.status_code < 500 and reply.status_code != 429:
                break
        return f"{settings.webhook}: {problem} (after {attempt + 1} attempt(s))"

    def _event(self, record: dict[str, Any]) -> str:
        try:
            send_alarm_event(record, self.otlp, headers=self.otlp_headers)
        except Exception as exc:  # noqa: BLE001 - a sink's failure is said, the watch goes on
            return f"{self.otlp}: {exc}"
        return "ok"


def _sent(record: dict[str, Any]) -> dict[str, Any]:
    """The record as sinks send it (without the delivery bookkeeping)."""
    return {k: v for k, v in record.items() if k not in ("delivered", "sinks")}


def send_alarm_event(record: dict[str, Any], endpoint: str, *, headers: dict[str, str] | None = None) -> None:
    """One ``ragassay.watch.alarm`` log record to an OTLP/HTTP logs endpoint (the official exporter)."""
    from opentelemetry._logs import LogRecord
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import ReadableLogRecord
    from opentelemetry.sdk._logs.export import LogRecordExportResult
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from .. import __version__
    from ..traces.evaluations import logs_endpoint

    attributes = {
        "ragassay.watch.name": str(record.get("watch")),
        "ragassay.run.id": str(record.get("run")),
        "ragassay.watch.metric": str(record.get("metric")),
        "ragassay.watch.direction": str(record.get("direction")),
        "ragassay.watch.text": record["text"],
        "ragassay.watch.alarm": json.dumps(_sent(record)),  # not sorted: the first suspect stays first
    }
    for key in ("change", "low", "high", "started_at", "fired_at"):
        if record.get(key) is not None:
            attributes[f"ragassay.watch.{key}"] = float(record[key])
    now = time.time_ns()
    log = LogRecord(timestamp=now, observed_timestamp=now, event_name=ALARM_EVENT, attributes=attributes)
    readable = ReadableLogRecord(
        log_record=log,
        resource=Resource({"service.name": "ragassay", "service.version": __version__}),
        instrumentation_scope=InstrumentationScope("ragassay", __version__),
    )
    exporter = OTLPLogExporter(endpoint=logs_endpoint(endpoint), timeout=10, headers=headers or None)
    try:
        if exporter.export([readable]) != LogRecordExportResult.SUCCESS:
            raise RuntimeError("the receiver did not accept the event")
    finally:
        exporter.shutdown()
