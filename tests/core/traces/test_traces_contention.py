"""Trace writers sharing one SQLite results file: a long ``traces import`` is staged, then switched in, so a span
posted to the receiver meanwhile is stored at once (never an HTTP 500, which exporters drop); when the file stays
locked by another writer the receiver answers 503 with Retry-After, and the real OpenTelemetry SDK exporter sends
the spans again until they are stored. Pauses and locks are events: no test waits for time."""

from __future__ import annotations

import json

import httpx
import pytest
from contention import HeldLock, PauseAt, in_thread

from ragassay.store import open_store
from ragassay.traces import read_traces, scan_traces
from ragassay.traces.ingest import BATCH_SPANS, import_paths
from ragassay.traces.receiver import Receiver

from otlp_traces import openinference_trace, request

TRACES = 2_000  # 6 spans each: 12,000 spans, six batches of the import
JSON_HEADERS = {"content-type": "application/json"}


@pytest.fixture
def db(tmp_path):
    return tmp_path / "results.db"


def _write_traces(path, count: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for n in range(1, count + 1):
            out.write(json.dumps(request(openinference_trace(n, f"Q{n}?", f"a{n}"))) + "\n")


def _inserts_of_spans(sql: str) -> bool:
    return sql.lstrip().upper().startswith("INSERT") and "spans" in sql


def test_a_span_posted_during_a_long_import_is_stored_at_once_and_the_import_completes(db, tmp_path):
    importer, served = open_store(f"sqlite:///{db}"), open_store(f"sqlite:///{db}", retry_s=0)
    _write_traces(tmp_path / "big.jsonl", TRACES)
    try:
        with PauseAt(importer.engine, _inserts_of_spans, count=3) as pause:  # two batches in, the third next
            thread, outcome = in_thread(lambda: import_paths(importer, [tmp_path / "big.jsonl"]))
            assert pause.paused.wait(300), f"the import never reached its middle: {outcome}"
            with Receiver(served) as receiver, httpx.Client(timeout=60) as client:
                posted = request(openinference_trace(TRACES + 1, "During?", "yes"))
                reply = client.post(receiver.url, content=json.dumps(posted), headers=JSON_HEADERS)
            assert reply.status_code == 200, reply.text  # stored now, while the import waits in its middle
            assert [t.question for t in read_traces(served)] == ["During?"]  # the import is not visible yet
            pause.go()
            thread.join(300)
        report = outcome["result"]
        assert (report.spans_read, report.spans_new, report.traces_new) == (TRACES * 6, TRACES * 6, TRACES)
        assert report.traces_after == TRACES + 1 and report.spans_total == (TRACES + 1) * 6
        assert sum(1 for _ in scan_traces(served)) == TRACES + 1
        assert TRACES * 6 > 2 * BATCH_SPANS  # the pause was in the middle of the import, not at its end
    finally:
        served.close()
        importer.close()


def test_an_import_with_a_malformed_last_line_stores_nothing_while_the_receiver_stores(db, tmp_path):
    importer, served = open_store(f"sqlite:///{db}"), open_store(f"sqlite:///{db}", retry_s=0)
    _write_traces(tmp_path / "big.jsonl", TRACES)
    with (tmp_path / "big.jsonl").open("a") as out:
        out.write("{broken\n")
    try:
        with PauseAt(importer.engine, _inserts_of_spans, count=3) as pause:
            thread, outcome = in_thread(lambda: import_paths(importer, [tmp_path / "big.jsonl"]))
            assert pause.paused.wait(300)
            with Receiver(served) as receiver, httpx.Client(timeout=60) as client:
                posted = request(openinference_trace(TRACES + 1, "During?", "yes"))
                assert client.post(receiver.url, content=json.dumps(posted), headers=JSON_HEADERS).status_code == 200
            pause.go()
            thread.join(300)
        assert "invalid JSON" in str(outcome.get("error"))
        assert [t.question for t in read_traces(served)] == ["During?"]  # the receiver's, none of the import
    finally:
        served.close()
        importer.close()


def test_a_store_locked_by_another_writer_gets_503_and_the_sdk_exporter_sends_again(db):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ragassay.traces.receiver import RETRY_AFTER_S

    store = open_store(f"sqlite:///{db}", retry_s=0)
    finished = InMemorySpanExporter()  # the SDK's spans, exported below by the OTLP/HTTP exporter itself
    provider = TracerProvider(resource=Resource.create({"service.name": "rag-app"}))
    provider.add_span_processor(SimpleSpanProcessor(finished))
    with provider.get_tracer("test").start_as_current_span("rag") as root:
        root.set_attribute("input.value", "Busy?")
        root.set_attribute("output.value", "kept")
    try:
        with Receiver(store) as receiver:
            exporter = OTLPSpanExporter(endpoint=receiver.url, timeout=120)
            with HeldLock(db) as lock:
                thread, outcome = in_thread(lambda: exporter.export(finished.get_finished_spans()))
                assert receiver.stats.wait_for(lambda s: s.busy >= 1, 300), "the receiver never answered busy"
                lock.release()  # the other writer commits; the exporter's next try gets through
                thread.join(300)
            assert outcome == {"result": SpanExportResult.SUCCESS}
            assert receiver.stats.busy >= 1 and receiver.stats.spans == 1
        with httpx.Client() as client, HeldLock(db), Receiver(store) as again:
            reply = client.post(again.url, content=json.dumps(request(openinference_trace(9, "Q?", "a"))),
                                headers=JSON_HEADERS, timeout=120)  # fmt: skip
        assert reply.status_code == 503 and reply.headers["retry-after"] == str(RETRY_AFTER_S)
        assert "busy" in reply.json()["message"] and "send it again" in reply.json()["message"]
        (trace,) = read_traces(store)
        assert trace.spans[0].attributes["input.value"] == "Busy?"
    finally:
        exporter.shutdown()
        store.close()
