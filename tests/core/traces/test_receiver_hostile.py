"""The OTLP receiver against an attacker and bad luck, over real HTTP on 127.0.0.1: a gzip body of several members
is read whole (and trailing garbage refused), a foreign ``Host`` (a DNS-rebinding page) is refused, deeply nested
JSON is a 400, a slow client is disconnected, and a client that goes away mid-body costs no traceback."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from ragassay.store import open_store
from ragassay.traces import read_traces
from ragassay.traces.otlp import request_from_json
from ragassay.traces.receiver import Receiver

from otlp_traces import genai_trace, request

JSON = {"content-type": "application/json"}
PROTOBUF = {"content-type": "application/x-protobuf"}
GZIP = {"content-encoding": "gzip"}
GUARD_S = 600  # a hang guard only: every wait below ends on the event it waits for


@pytest.fixture
def store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'results.db'}")
    yield store
    store.close()


def _json(number: int, question: str) -> bytes:
    return json.dumps(request(genai_trace(number, question, question.lower()))).encode()


def _protobuf(number: int, question: str) -> bytes:
    return request_from_json(json.loads(_json(number, question)), "test").SerializeToString()


def questions(store) -> list[str]:
    return sorted(trace.question for trace in read_traces(store))


def test_every_gzip_member_is_read_and_trailing_garbage_refused(store):
    with Receiver(store) as receiver, httpx.Client(timeout=60) as client:
        both = gzip.compress(_protobuf(1, "A?")) + gzip.compress(_protobuf(2, "B?"))  # protobuf: a + b merges
        assert client.post(receiver.url, content=both, headers={**PROTOBUF, **GZIP}).status_code == 200
        assert questions(store) == ["A?", "B?"]
        two_documents = gzip.compress(_json(3, "C?")) + gzip.compress(_json(4, "D?"))
        reply = client.post(receiver.url, content=two_documents, headers={**JSON, **GZIP})
        assert reply.status_code == 400 and "one ExportTraceServiceRequest per request" in reply.json()["message"]
        garbage = gzip.compress(_json(5, "E?")) + b"trailing garbage"
        reply = client.post(receiver.url, content=garbage, headers={**JSON, **GZIP})
        assert reply.status_code == 400 and "16 bytes after gzip member 1 that are not gzip" in reply.json()["message"]
        half = gzip.compress(_json(6, "F?")) + gzip.compress(_json(7, "G?"))[:20]
        reply = client.post(receiver.url, content=half, headers={**JSON, **GZIP})
        assert reply.status_code == 400 and "gzip member 2 of the body is truncated" in reply.json()["message"]
    assert questions(store) == ["A?", "B?"]  # nothing of a refused request
    assert (receiver.stats.requests, receiver.stats.rejected) == (4, 3)


def test_a_foreign_host_name_is_refused_on_loopback(store):
    with Receiver(store) as receiver, httpx.Client(timeout=60) as client:
        port = receiver.url.split(":")[2].split("/")[0]
        for host in ("evil.example", f"evil.example:{port}", "192.168.1.9"):
            reply = client.post(receiver.url, content=_json(1, "A?"), headers={**JSON, "host": host})
            assert reply.status_code == 403 and "loopback host name" in reply.json()["message"], host
        for host in (f"localhost:{port}", f"127.1:{port}", f"[::1]:{port}"):
            assert client.post(receiver.url, content=_json(2, "B?"), headers={**JSON, "host": host}).status_code == 200
    assert questions(store) == ["B?"]


def test_deeply_nested_json_is_a_400_not_a_500(store):
    with Receiver(store) as receiver, httpx.Client(timeout=60) as client:
        for body in (b"[" * 1000 + b"]" * 1000, b'{"resourceSpans": ' + b"[" * 1000 + b"]" * 1000 + b"}"):
            reply = client.post(receiver.url, content=body, headers=JSON)
            assert reply.status_code == 400 and "nested too deeply" in reply.json()["message"]
    assert questions(store) == []


def _connect(url: str) -> socket.socket:
    host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
    client = socket.create_connection((host, int(port)), timeout=GUARD_S)
    return client


def test_a_slow_client_is_disconnected_at_the_deadline(store):
    head = b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    with Receiver(store, deadline_s=0.2) as receiver:
        with _connect(receiver.url) as slow_body:
            slow_body.sendall(head + b"Content-Length: 5000\r\n\r\n" + _json(1, "A?")[:100])
            assert slow_body.recv(1000) == b""  # the receiver closed the connection
        with _connect(receiver.url) as slow_headers:
            slow_headers.sendall(head[:30])
            assert slow_headers.recv(1000) == b""
        deadline = time.monotonic() + GUARD_S
        while receiver.stats.rejected < 1:  # the application saw the slow body's client go
            assert time.monotonic() < deadline
            time.sleep(0.01)
    assert questions(store) == [] and receiver.stats.spans == 0


def test_a_client_gone_mid_body_costs_no_traceback(tmp_path):
    command = [sys.executable, "-m", "ragassay", "traces", "receive", "--db", str(tmp_path / "r.db"), "--port", "0"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ})
    try:
        url = process.stderr.readline().split(" on ")[1].split()[0]
        with _connect(url) as gone:
            gone.sendall(
                b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 5000\r\n\r\n" + _json(1, "A?")[:100]
            )
        assert httpx.post(url, content=_json(2, "B?"), headers=JSON, timeout=60).status_code == 200
        process.send_signal(signal.SIGINT)
        log = process.communicate(timeout=GUARD_S)[1]  # uvicorn ends every request before it stops
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0 and "Traceback" not in log and "Exception" not in log, log
    assert "stopped: 2 request(s), 3 span(s) stored, 1 rejected" in log, log
