"""End to end: an app instrumented with the real OpenTelemetry SDK (OTLP/HTTP span exporter) sends traces to
``ragassay watch`` on 127.0.0.1; the watcher is killed with SIGKILL mid-stream and started again; the app's answers
degrade after a version change (service.version 1 -> 2). The alarm fires once, after the change only, names the
version and the metric, reaches a loopback webhook and the JSON-lines sink, and the gate exits 1; no scored value is
lost and no trace is scored twice. Everything waits on conditions (generous timeouts), never on time."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from servers.base import JSONServer, Reply

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

TESTS = Path(__file__).resolve().parents[2]
CONFIG = """
[project]
name = "faq"

[watch]
name = "production"
metrics = ["answer_relevance_token_recall"]
quiet_s = 0.3
poll_s = 0.05
batch = 3
reference = { target = { answer_relevance_token_recall = 0.9 } }
"""
PER_VERSION = 12  # traces of version 1 (good answers)
DEGRADED = 40  # traces of version 2 (bad answers): the detector's evidence must pass 1/alpha, with the price of
# its start weights (about log 2000 for a change this early: docs/watch.md), before it alarms
TOTAL = PER_VERSION + DEGRADED
QUESTIONS = [f"Which river flows through the old town of city number {n}" for n in range(TOTAL)]


class Watcher:
    """``ragassay watch`` as a process of its own; its stderr collected, the receiver's port read from it."""

    def __init__(self, project: Path, *args: str):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
        command = [sys.executable, "-m", "ragassay", "watch", "-c", str(project), "--port", "0", *args]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))
            if "receiving OTLP traces on" in line:
                self.ready.set()
        self.ready.set()

    def endpoint(self) -> str:
        assert self.ready.wait(120), "the watcher did not start"
        found = [line for line in self.lines if "receiving OTLP traces on" in line]
        assert found, "\n".join(self.lines)
        return found[0].split("receiving OTLP traces on ")[1].split("/v1/traces")[0]

    def wait(self, timeout: float = 300) -> int:
        code = self.process.wait(timeout)
        self.reader.join(10)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)


def _send(endpoint: str, version: str, numbers: range, answer) -> None:
    """One trace per number, as an instrumented app exports them: a CHAIN root with a RETRIEVER child."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource({"service.name": "faq", "service.version": version}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", timeout=30)))
    tracer = provider.get_tracer("faq")
    for n in numbers:
        with tracer.start_as_current_span("answer_question") as root:
            root.set_attribute("openinference.span.kind", "CHAIN")
            root.set_attribute("input.value", QUESTIONS[n])
            with tracer.start_as_current_span("retrieve") as retrieve:
                retrieve.set_attribute("openinference.span.kind", "RETRIEVER")
                retrieve.set_attribute("retrieval.documents.0.document.id", f"d{n}")
                retrieve.set_attribute("retrieval.documents.0.document.content", f"About city number {n}.")
            root.set_attribute("output.value", answer(n))
    provider.shutdown()


def _rows(project: Path, query: str) -> list[tuple]:
    path = project / "ragassay-results.db"
    if not path.exists():
        return []
    with sqlite3.connect(path, timeout=30) as db:
        try:
            return db.execute(query).fetchall()
        except sqlite3.OperationalError:  # the watcher has not created its tables yet
            return []


def _wait_for(condition, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the watcher"
        time.sleep(0.05)


def _good(n: int) -> str:
    return f"The river of the old town of city number {n} flows through it, which river is the Vltava."


@pytest.mark.timeout(600)
def test_watch_alarms_on_the_version_change_only_and_survives_sigkill(tmp_path):
    (tmp_path / "ragassay.toml").write_text(CONFIG, encoding="utf-8")
    posted = []
    with JSONServer({("POST", "/alarms"): lambda request: posted.append(request.json) or Reply(200, {})}) as hook:
        webhook = ["--webhook", f"{hook.url}/alarms", "--jsonl", "alarms.jsonl"]
        first = Watcher(tmp_path, "--for", "600", *webhook)
        try:
            half = PER_VERSION // 2
            _send(first.endpoint(), "1", range(half), _good)
            _wait_for(lambda: _rows(tmp_path, "SELECT count(*) FROM watch_traces") == [(half,)])
            _send(first.endpoint(), "1", range(half, PER_VERSION), _good)  # stored, mostly not complete yet: killed
        finally:
            first.kill()
        kept = set(
            _rows(tmp_path, "SELECT o.question_id, m.value FROM outputs o JOIN metric_values m ON m.output_id = o.id")
        )
        committed = _rows(tmp_path, "SELECT count(*) FROM watch_traces")[0][0]
        assert PER_VERSION // 2 <= committed == len(kept) and not posted
        assert not any("ALARM" in line for line in first.lines)
        second = Watcher(tmp_path, "--traces", str(TOTAL - committed), *webhook)
        try:
            _send(second.endpoint(), "2", range(PER_VERSION, TOTAL), lambda n: "I cannot say.")
            code = second.wait()
        finally:
            second.kill()
    assert code == 1, "\n".join(second.lines)
    outputs = _rows(tmp_path, "SELECT question_id FROM outputs")
    assert len(outputs) == len(set(outputs)) == TOTAL  # every trace scored, none twice
    assert _rows(tmp_path, "SELECT status, count(*) FROM watch_traces GROUP BY status") == [("scored", TOTAL)]
    values = set(
        _rows(tmp_path, "SELECT o.question_id, m.value FROM outputs o JOIN metric_values m ON m.output_id = o.id")
    )
    assert kept <= values and len(values) == TOTAL  # nothing committed before the kill was lost
    assert len(posted) == 1
    alarm = posted[0]
    assert alarm["metric"] == "answer_relevance_token_recall" and alarm["change"] < 0
    assert list(alarm["versions"]["service.version"])[0] == "2"
    bad = {q for (q,) in _rows(tmp_path, "SELECT question_id FROM outputs WHERE answer = 'I cannot say.'")}
    assert alarm["worst_traces"] and set(alarm["worst_traces"]) <= bad  # the traces after the change drove it
    assert "answer_relevance_token_recall" in alarm["text"] and "service.version: 2" in alarm["text"]
    assert any(line == alarm["text"] for line in second.lines)
    assert (tmp_path / "alarms.jsonl").read_text().count("\n") == 1
