"""Production traces at scale: import N traces (default 100,000) from OTLP JSON and from OTLP protobuf, score them
with lexical metrics, and measure the OTLP/HTTP receiver's sustained spans/s on loopback.

The script writes the traces itself (OpenInference attributes: a CHAIN root with the question and the answer, a
RETRIEVER span with two documents, an LLM span with model and token counts; 3 spans per trace) as

* OTLP JSON lines (the Collector's file exporter: one ``ExportTraceServiceRequest`` per line, hex ids), and
* OTLP protobuf (length-prefixed ``ExportTraceServiceRequest`` messages, as the Collector's file exporter writes),

then runs the real CLI in child processes, each timed on its own with its peak resident memory (``wait4``):

1. ``ragassay traces import FILE`` into a fresh project, once per encoding: traces/s and peak memory;
2. ``ragassay run`` of the JSON project (``traces`` source, ``trace_replay`` rag, reference-free lexical metrics):
   traces/s and peak memory;
3. ``ragassay traces receive --port P`` with a bounded client (``--clients`` threads, one request of
   ``--batch`` traces in flight each, protobuf): spans/s sustained over ``--seconds``.

    python benchmarks/traces.py [--traces 100000] [--clients 4] [--batch 100] [--seconds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

SPANS_PER_TRACE = 3
PER_REQUEST = 1_000  # traces per request in the files
METRICS = ["answer_relevance_token_recall", "context_relevance_token_precision", "k_precision"]
START_NS = 1_741_046_400 * 1_000_000_000  # 2025-03-04 00:00 UTC


def _attrs(values: dict):
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    pairs = []
    for key, value in values.items():
        if isinstance(value, int):
            pairs.append(KeyValue(key=key, value=AnyValue(int_value=value)))
        elif isinstance(value, float):
            pairs.append(KeyValue(key=key, value=AnyValue(double_value=value)))
        else:
            pairs.append(KeyValue(key=key, value=AnyValue(string_value=value)))
    return pairs


def request(first: int, count: int):
    """One ExportTraceServiceRequest holding traces first .. first + count - 1."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    spans = []
    for i in range(first, first + count):
        trace_id, start = (i + 1).to_bytes(16, "big"), START_NS + i * 60_000_000_000 // 100
        root, retriever, llm = ((i * 3 + k + 1).to_bytes(8, "big") for k in range(3))
        value = i * 7 % 1000
        question = f"What is the value of item number {i} in the catalogue?"
        answer = f"The catalogue says item {i} has value {value}."
        spans.append(
            Span(
                trace_id=trace_id,
                span_id=root,
                name="rag",
                start_time_unix_nano=start,
                end_time_unix_nano=start + 900_000_000,
                attributes=_attrs(
                    {
                        "openinference.span.kind": "CHAIN",
                        "input.value": question,
                        "output.value": answer,
                        "session.id": f"s{i % 97}",
                    }
                ),
            )
        )
        spans.append(
            Span(
                trace_id=trace_id,
                span_id=retriever,
                parent_span_id=root,
                name="retrieve",
                start_time_unix_nano=start + 1_000_000,
                end_time_unix_nano=start + 50_000_000,
                attributes=_attrs(
                    {
                        "openinference.span.kind": "RETRIEVER",
                        "input.value": question,
                        "retrieval.documents.0.document.id": f"doc{i}",
                        "retrieval.documents.0.document.content": f"Item number {i} has value {value}.",
                        "retrieval.documents.0.document.score": 0.9,
                        "retrieval.documents.1.document.id": f"doc{i + 1}",
                        "retrieval.documents.1.document.content": f"Item {i + 1} has value {value + 7}.",
                        "retrieval.documents.1.document.score": 0.4,
                    }
                ),
            )
        )
        spans.append(
            Span(
                trace_id=trace_id,
                span_id=llm,
                parent_span_id=root,
                name="ChatCompletion",
                start_time_unix_nano=start + 60_000_000,
                end_time_unix_nano=start + 880_000_000,
                attributes=_attrs(
                    {
                        "openinference.span.kind": "LLM",
                        "llm.model_name": "gpt-4o-mini",
                        "llm.token_count.prompt": 120,
                        "llm.token_count.completion": 14,
                        "output.value": answer,
                    }
                ),
            )
        )
    resource = Resource(attributes=_attrs({"service.name": "catalogue-rag", "service.version": "1.0"}))
    return ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(resource=resource, scope_spans=[ScopeSpans(spans=spans)])]
    )


def write_files(root: Path, traces: int) -> tuple[Path, Path]:
    """traces.jsonl (OTLP JSON lines) and traces.pb (length-prefixed protobuf) under ``root``."""
    from google.protobuf.json_format import MessageToDict

    json_path, pb_path = root / "traces.jsonl", root / "traces.pb"
    with json_path.open("w", encoding="utf-8") as text, pb_path.open("wb") as binary:
        for first in range(0, traces, PER_REQUEST):
            message = request(first, min(PER_REQUEST, traces - first))
            data = message.SerializeToString()
            binary.write(len(data).to_bytes(4, "big") + data)
            payload = MessageToDict(message, use_integers_for_enums=True)
            for resource_spans in payload["resourceSpans"]:
                for scope in resource_spans["scopeSpans"]:
                    for span in scope["spans"]:
                        for key in ("traceId", "spanId", "parentSpanId"):
                            if key in span:
                                span[key] = _hex(span[key])
            text.write(json.dumps(payload, separators=(",", ":")) + "\n")
    return json_path, pb_path


def _hex(b64: str) -> str:
    import base64

    return base64.b64decode(b64).hex()


def write_project(root: Path) -> Path:
    """A project scoring every stored trace with reference-free lexical metrics."""
    (root / "ragassay.toml").write_text(
        textwrap.dedent(f"""
        [project]
        concurrency = 8
        [dataset]
        source = "traces"
        [systems.production]
        rag = "trace_replay"
        [evaluation]
        metrics = {json.dumps(METRICS)}
        """)
    )
    return root


def timed(command: list[str], cwd: Path) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, stdout+stderr) of one child process (its own rusage, from wait4)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({child.returncode}):\n{output[-3000:]}")
    return wall, usage.ru_maxrss / 1024, output


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def receive(root: Path, clients: int, batch: int, seconds: float) -> tuple[int, float]:
    """(spans accepted, seconds) of a bounded client against ``ragassay traces receive`` on loopback."""
    import httpx

    project = write_project(root)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "ragassay", "traces", "receive", "--port", str(port), "-c", str(project)],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/v1/traces"
    try:
        _wait_for(port, server)
        bodies = [request(k * batch, batch).SerializeToString() for k in range(64)]  # distinct traces per body
        accepted, lock, stop = [0], threading.Lock(), time.perf_counter() + seconds

        def client(offset: int) -> None:
            with httpx.Client(timeout=30) as http:
                k = offset
                while time.perf_counter() < stop:
                    body = request((1_000_000 + k) * batch, batch).SerializeToString() if k >= 64 else bodies[k]
                    reply = http.post(url, content=body, headers={"Content-Type": "application/x-protobuf"})
                    if reply.status_code != 200:
                        raise SystemExit(f"the receiver answered {reply.status_code}: {reply.text[:300]}")
                    with lock:
                        accepted[0] += batch * SPANS_PER_TRACE
                    k += clients

        start = time.perf_counter()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return accepted[0], time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_for(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"ragassay traces receive exited: {server.stderr.read()[-2000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit("ragassay traces receive did not listen within 60 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=4, help="receiver: concurrent client requests at most")
    parser.add_argument("--batch", type=int, default=100, help="receiver: traces per request")
    parser.add_argument("--seconds", type=float, default=10.0, help="receiver: how long the clients send")
    args = parser.parse_args()
    n = args.traces
    with tempfile.TemporaryDirectory(prefix="ragassay-traces-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        json_path, pb_path = write_files(root, n)
        sizes = f"JSON {json_path.stat().st_size / 2**20:.0f} MiB, protobuf {pb_path.stat().st_size / 2**20:.0f} MiB"
        took = time.perf_counter() - start
        print(f"generated:          {n:,} traces ({n * SPANS_PER_TRACE:,} spans) in {took:.1f} s; {sizes}")
        for name, path in (("OTLP JSON", json_path), ("OTLP protobuf", pb_path)):
            project = root / name.split()[-1].lower()
            project.mkdir()
            write_project(project)
            wall, peak, _ = timed(
                [sys.executable, "-m", "ragassay", "traces", "import", str(path), "-c", str(project)], project
            )
            print(f"import {name + ':':15} {wall:6.1f} s, {n / wall:8,.0f} traces/s, peak RSS {peak:.0f} MiB")
        wall, peak, _ = timed([sys.executable, "-m", "ragassay", "run", "-q", "-c", str(root / "json")], root / "json")
        print(
            f"score (run -q):      {wall:6.1f} s, {n / wall:8,.0f} traces/s, peak RSS {peak:.0f} MiB "
            f"({len(METRICS)} lexical metrics)"
        )
        (root / "receive").mkdir()
        spans, seconds = receive(root / "receive", args.clients, args.batch, args.seconds)
        shape = f"{args.clients} clients, {args.batch * SPANS_PER_TRACE} spans per request"
        print(f"receive (loopback):  {spans / seconds:8,.0f} spans/s sustained over {seconds:.1f} s ({shape})")


if __name__ == "__main__":
    main()
