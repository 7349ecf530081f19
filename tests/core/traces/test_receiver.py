"""The OTLP/HTTP receiver over real HTTP on 127.0.0.1: JSON, protobuf, gzip, size limit, malformed payloads
(400, nothing stored), a trace sent in several requests; the CLI refuses a non-loopback host without the flag and
stops cleanly on Ctrl-C (SIGINT)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys

import httpx
import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from ragassay.store import open_store
from ragassay.traces import read_traces, scan_traces
from ragassay.traces.otlp import request_from_json
from ragassay.traces.receiver import Receiver

from otlp_traces import genai_trace, openinference_trace, request

JSON_HEADERS = {"content-type": "application/json"}
PB_HEADERS = {"content-type": "application/x-protobuf"}


@pytest.fixture
def store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'results.db'}")
    yield store
    store.close()


def test_json_protobuf_and_gzip_requests_are_stored(store):
    with Receiver(store) as receiver, httpx.Client(timeout=30) as client:
        reply = client.post(
            receiver.url, content=json.dumps(request(openinference_trace(1, "A?", "a"))), headers=JSON_HEADERS
        )
        assert reply.status_code == 200 and reply.json() == {}
        raw = request_from_json(request(genai_trace(2, "B?", "b")), "x").SerializeToString()
        reply = client.post(receiver.url, content=raw, headers=PB_HEADERS)
        assert reply.status_code == 200 and reply.headers["content-type"] == "application/x-protobuf"
        ExportTraceServiceResponse.FromString(reply.content)  # a valid (empty) response message
        zipped = gzip.compress(json.dumps(request(genai_trace(3, "C?", "c"))).encode())
        reply = client.post(receiver.url, content=zipped, headers={**JSON_HEADERS, "content-encoding": "gzip"})
        assert reply.status_code == 200
    assert sorted(t.question for t in read_traces(store)) == ["A?", "B?", "C?"]
    assert (receiver.stats.requests, receiver.stats.rejected) == (3, 0)


def test_spans_of_a_trace_in_several_requests_make_one_trace(store):
    spans = openinference_trace(4, "D?", "d")
    with Receiver(store) as receiver, httpx.Client(timeout=30) as client:
        for part in (spans[3:], spans[:3]):
            assert client.post(receiver.url, content=json.dumps(request(part)), headers=JSON_HEADERS).status_code == 200
    (trace,) = read_traces(store)
    assert len(trace.spans) == 6 and trace.answer == "d"


def test_size_limit_before_and_after_decompression_is_413(store):
    with Receiver(store, max_bytes=4_000) as receiver, httpx.Client(timeout=30) as client:
        big = json.dumps(request(openinference_trace(5, "E?" * 3_000, "e")))
        assert client.post(receiver.url, content=big, headers=JSON_HEADERS).status_code == 413
        bomb = gzip.compress(big.encode())
        assert len(bomb) < 4_000
        reply = client.post(receiver.url, content=bomb, headers={**JSON_HEADERS, "content-encoding": "gzip"})
        assert reply.status_code == 413 and "over the limit of 4,000 bytes" in reply.json()["message"]
    assert list(scan_traces(store)) == []


def test_malformed_payloads_are_400_with_the_reason_and_nothing_is_stored(store):
    good = openinference_trace(6, "F?", "f")
    bad_span = dict(good[0], spanId="123")
    with Receiver(store) as receiver, httpx.Client(timeout=30) as client:
        reply = client.post(receiver.url, content=json.dumps(request(good[1:] + [bad_span])), headers=JSON_HEADERS)
        assert reply.status_code == 400
        assert "spanId" in reply.json()["message"] and "nothing of this request was stored" in reply.json()["message"]
        reply = client.post(receiver.url, content=b"{not json", headers=JSON_HEADERS)
        assert reply.status_code == 400 and "invalid JSON" in reply.json()["message"]
        reply = client.post(receiver.url, content=b"\xff\xfe garbage", headers=PB_HEADERS)
        assert reply.status_code == 400 and "malformed OTLP protobuf" in Status.FromString(reply.content).message
        reply = client.post(receiver.url, content=b"x", headers={"content-type": "text/plain"})
        assert reply.status_code == 415
    assert list(scan_traces(store)) == [] and receiver.stats.rejected == 4


def test_cli_refuses_a_remote_host_without_the_flag(tmp_path):
    from conftest import ragassay_cli

    result = ragassay_cli("traces", "receive", "--db", str(tmp_path / "r.db"), "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 2 and "--allow-remote" in result.stderr


def test_cli_receives_and_stops_cleanly_on_ctrl_c(tmp_path):
    command = [sys.executable, "-m", "ragassay", "traces", "receive", "--db", str(tmp_path / "r.db"), "--port", "0"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env={**os.environ})
    try:
        line = process.stderr.readline()
        assert "receiving OTLP traces on http://127.0.0.1:" in line, line
        url = line.split(" on ")[1].split()[0]
        reply = httpx.post(
            url, content=json.dumps(request(genai_trace(7, "G?", "g"))), headers=JSON_HEADERS, timeout=30
        )
        assert reply.status_code == 200
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=60)[1]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, rest
    assert "1 request(s), 3 span(s) stored, 0 rejected" in rest
    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        assert [t.question for t in read_traces(store)] == ["G?"]
    finally:
        store.close()
