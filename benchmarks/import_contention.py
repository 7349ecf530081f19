"""Other writers during a long import into the same SQLite results file: how long they wait, and whether they fail.

Two parts, each with the real CLI in a child process and a second writer in this process on the same file:

``labels``: ``ragassay labels import FILE`` of ``--labels`` labels (default 20,000) while this process adds one
label every ``--every-ms`` through its own store (as ``ragassay label`` does when an annotator presses a key).

``traces``: ``ragassay traces import FILE --no-check`` of ``--traces`` traces (default 60,000, three spans each)
while this process serves the OTLP/HTTP receiver on the same file and posts one trace to it every ``--every-ms``.

Printed per part: the import's wall time, and the other writer's writes: how many, how many failed (a label
lost, a request answered other than 200), and the median and longest wait. Before issue 38 (item 24) an import
held one write transaction for its whole length (20,000 labels: 366 s; 60,000 traces: 287 s), so the other
writer waited as long and then failed.

    python benchmarks/import_contention.py [labels|traces|all] [--labels 20000] [--traces 60000] [--every-ms 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # benchmarks/traces.py writes the trace files

RUN_ID = "contention-run"
SYSTEMS = ("alpha", "beta")


def write_run(url: str, samples: int) -> None:
    """A run of ``samples`` samples answered by two systems, to label."""
    from ragassay.models import RAGOutput, Sample
    from ragassay.store import open_store
    from ragassay.store.units import UnitResult

    store = open_store(url)
    items = [Sample(question_id=f"q{i}", question=f"Question {i}?") for i in range(samples)]
    row = {"id": RUN_ID, "fingerprint": RUN_ID, "project": "p", "config_path": "x", "config_json": "{}"}
    store.create_run(
        {**row, "spec_json": "{}", "ragassay_version": "0", "sample_count": samples},
        [(s, "{}") for s in SYSTEMS],
        items,
    )
    for start in range(0, samples, 2_000):
        units = [
            UnitResult(system, f"q{i}", "ok", RAGOutput(answer=f"answer {i}"))
            for i in range(start, min(samples, start + 2_000))
            for system in SYSTEMS
        ]
        store.write_units(RUN_ID, units)
    store.finish_run(RUN_ID, "complete", [])
    store.close()


def label(sample: int, system: str, annotator: str, at: float):
    from ragassay.labels import Label

    return Label(
        run_id=RUN_ID,
        sample_id=f"q{sample}",
        system=system,
        rubric="correct",
        rubric_version=1,
        annotator=annotator,
        value=float(sample % 2),
        labelled_at=at,
    )


class Writer(threading.Thread):
    """Calls ``write()`` every ``every_s`` until stopped; keeps each call's duration and whether it failed."""

    def __init__(self, write, every_s: float):
        super().__init__(daemon=True)
        self.write, self.every_s = write, every_s
        self.waits: list[float] = []
        self.failures: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.stop.wait(self.every_s):
            started = time.perf_counter()
            try:
                self.write(n)
            except Exception as exc:  # noqa: BLE001 - a failed write is a row of the result
                self.failures.append(f"{type(exc).__name__}: {str(exc)[:120]}")
            self.waits.append(time.perf_counter() - started)
            n += 1


def contended(command: list[str], writer: Writer) -> tuple[float, subprocess.CompletedProcess]:
    """Run ``command`` to its end with ``writer`` writing meanwhile; the command's wall time."""
    writer.start()
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    writer.stop.set()
    writer.join()
    return wall, done


def report(name: str, count: int, wall: float, done: subprocess.CompletedProcess, writer: Writer, what: str) -> None:
    if done.returncode != 0:
        raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    waits = sorted(writer.waits) or [0.0]
    print(f"{name}: {count:,} in {wall:.1f} s ({done.stdout.strip().splitlines()[-1] if done.stdout else ''})")
    print(
        f"  meanwhile {len(writer.waits):,} {what}: {len(writer.failures)} failed; wait median "
        f"{statistics.median(waits) * 1000:.0f} ms, longest {waits[-1] * 1000:.0f} ms"
    )
    for failure in writer.failures[:3]:
        print(f"    {failure}")


def labels_part(root: Path, count: int, every_s: float) -> None:
    from ragassay.labels import write_jsonl
    from ragassay.store import open_store

    url = f"sqlite:///{root / 'labels.db'}"
    write_run(url, count // 2)
    write_jsonl([label(i, s, "importer", 1_000.0 + i) for i in range(count // 2) for s in SYSTEMS], root / "l.jsonl")
    store = open_store(url)
    writer = Writer(lambda n: store.add_label(label(n % (count // 2), SYSTEMS[0], "annotator", 5_000.0 + n)), every_s)
    command = [sys.executable, "-m", "ragassay", "labels", "import", str(root / "l.jsonl"), "--db", url]
    wall, done = contended(command, writer)
    store.close()
    report("labels import", count, wall, done, writer, "labels given")


def traces_part(root: Path, count: int, every_s: float) -> None:
    import httpx
    import traces as trace_files  # benchmarks/traces.py
    from google.protobuf.json_format import MessageToDict

    from ragassay.store import open_store
    from ragassay.traces.receiver import Receiver

    json_path, _ = trace_files.write_files(root, count)
    url = f"sqlite:///{root / 'traces.db'}"
    store = open_store(url)
    with Receiver(store) as receiver, httpx.Client(timeout=60) as client:

        def post(n: int) -> None:
            payload = MessageToDict(trace_files.request(count + n, 1))
            for scope in payload["resourceSpans"][0]["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = trace_files._hex(span[key])
            reply = client.post(receiver.url, content=json.dumps(payload), headers={"content-type": "application/json"})
            if reply.status_code != 200:
                raise RuntimeError(f"HTTP {reply.status_code}: {reply.text[:100]}")

        writer = Writer(post, every_s)
        command = [sys.executable, "-m", "ragassay", "traces", "import", str(json_path), "--db", url, "--no-check"]
        wall, done = contended(command, writer)
    store.close()
    report("traces import", count, wall, done, writer, "requests posted to the receiver")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", default="all", choices=["labels", "traces", "all"])
    parser.add_argument("--labels", type=int, default=20_000)
    parser.add_argument("--traces", type=int, default=60_000)
    parser.add_argument("--every-ms", type=float, default=50.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragassay-contention-") as tmp:
        if args.part in ("labels", "all"):
            labels_part(Path(tmp), args.labels, args.every_ms / 1000)
        if args.part in ("traces", "all"):
            traces_part(Path(tmp), args.traces, args.every_ms / 1000)


if __name__ == "__main__":
    main()
