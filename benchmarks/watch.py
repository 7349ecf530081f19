"""``ragassay watch`` over a long stream: memory stays flat and the watch keeps up with the import.

The script writes N traces (default 1,000,000; OpenInference, 3 spans each, as benchmarks/traces.py writes them)
as OTLP protobuf files of ``--chunk`` traces, then, in a fresh project:

1. starts the watch once (``ragassay watch --from-store --for 0``: the watch run exists, it watches what is
   stored from now on);
2. stores the traces with the real CLI, ``ragassay traces import FILE`` per file (what the receiver stores, the
   same rows): the import speed, traces/s stored, and its peak RSS;
3. runs the watch over them in one child process (``--from-store``, the lexical metrics below, the real change
   detector of ragassay.analysis.monitor against a fixed target), session after session of ``--every`` traces
   (each resumes the last: what a restarted watcher does), and prints after each the traces decided, the
   watch's traces/s so far and the process's peak RSS (``ru_maxrss``) so far.

Flat memory: the peak RSS after the last session is about the one after the first. Throughput: the watch's
traces/s next to the import's, each also per CPU second (user + system time of the process: what a busy, shared
machine changes least).

``--sample 10%`` watches a hashed sample of the traces (the others are decided ``skipped`` by their ids, unread).

    python benchmarks/watch.py [--traces 1000000] [--chunk 100000] [--every 100000] [--batch 256] [--sample P]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from traces import SPANS_PER_TRACE, request  # noqa: E402

METRICS = ["answer_relevance_token_recall", "context_relevance_token_precision"]
PER_REQUEST = 1_000


def write_chunks(root: Path, traces: int, chunk: int) -> list[Path]:
    """Length-prefixed ``ExportTraceServiceRequest`` files of ``chunk`` traces each (distinct trace ids)."""
    files = []
    for first in range(0, traces, chunk):
        path = root / f"traces-{first // chunk:04d}.pb"
        with path.open("wb") as out:
            for start in range(first, min(first + chunk, traces), PER_REQUEST):
                data = request(start, min(PER_REQUEST, first + chunk - start, traces - start)).SerializeToString()
                out.write(len(data).to_bytes(4, "big") + data)
        files.append(path)
    return files


def write_project(root: Path, batch: int, sample: str | None = None) -> Path:
    """A project watching the stored traces (every one, or a hashed ``sample`` such as "10%") with lexical metrics
    against a fixed target."""
    targets = ", ".join(f"{m} = 0.45" for m in METRICS)  # about their mean on these traces: no alarm
    (root / "ragassay.toml").write_text(
        textwrap.dedent(f"""
        [project]
        name = "watched"
        concurrency = 8
        [dataset]
        source = "traces"
        [watch]
        metrics = {json.dumps(METRICS)}
        quiet_s = 0
        poll_s = 0.05
        batch = {batch}
        reference = {{ target = {{ {targets} }}, margin = 0.05 }}
        sinks = {{ stderr = false, jsonl = "alarms.jsonl" }}
        """)
        + (f"sample = {json.dumps(sample)}\n" if sample else "")
    )
    return root


def timed(command: list[str], cwd: Path, echo: bool = False) -> tuple[float, float, str, float]:
    """(wall seconds, peak RSS MiB, output, CPU seconds) of one child process (its own rusage, from wait4)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in child.stdout:
        lines.append(line)
        if echo:
            print(line, end="", flush=True)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: the watch raised an alarm
        raise SystemExit(f"{' '.join(command)} failed:\n{''.join(lines)[-3000:]}")
    return wall, usage.ru_maxrss / 1024, "".join(lines), usage.ru_utime + usage.ru_stime


def worker(project_dir: Path, total: int, every: int) -> None:
    """The watch, session after session of ``every`` traces, in this process; a line per session."""
    from ragassay.cli.watch_cmd import load_statistics
    from ragassay.engine.project import Project
    from ragassay.watch import StopRule, watch

    project, statistics = Project.load(project_dir), load_statistics()
    decided, alarms, spent = 0, 0, 0.0
    while decided < total:
        start = time.perf_counter()
        report = watch(project, statistics, stop=StopRule(traces=min(every, total - decided)), say=lambda _: None)
        spent += time.perf_counter() - start
        decided, alarms = decided + report.count, alarms + len(report.alarms)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
        print(
            f"watch: {decided:>9,} traces decided, {decided / spent:7,.0f} traces/s ({decided / cpu:,.0f} per CPU "
            f"second), peak RSS {peak:6.0f} MiB, alarms {alarms}, this session {report.decided}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=100_000, help="traces per file (one import each)")
    parser.add_argument("--every", type=int, default=100_000, help="traces per watch session (a line each)")
    parser.add_argument("--batch", type=int, default=256, help="[watch] batch: traces scored and committed together")
    parser.add_argument("--sample", default=None, help='[watch] sample, e.g. "10%%" (default: every trace)')
    parser.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    parser.add_argument("--worker", nargs=3, metavar=("PROJECT", "TOTAL", "EVERY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(Path(args.worker[0]), int(args.worker[1]), int(args.worker[2]))
        return
    n = args.traces
    with tempfile.TemporaryDirectory(prefix="ragassay-watch-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        files = write_chunks(root, n, args.chunk)
        print(f"generated:  {n:,} traces ({n * SPANS_PER_TRACE:,} spans) in {len(files)} file(s), "
              f"{time.perf_counter() - start:.1f} s", flush=True)  # fmt: skip
        (root / "project").mkdir()
        project = write_project(root / "project", args.batch, args.sample)
        ragassay = [sys.executable, "-m", "ragassay"]
        timed([*ragassay, "watch", "-c", str(project), "--from-store", "--for", "0"], project)  # the watch run
        wall, peak, cpu = 0.0, 0.0, 0.0
        for path in files:
            took, rss, _, used = timed([*ragassay, "traces", "import", str(path), "-c", str(project)], project)
            wall, peak, cpu = wall + took, max(peak, rss), cpu + used
        print(f"import:     {n:,} traces in {wall:.1f} s, {n / wall:,.0f} traces/s ({n / cpu:,.0f} per CPU second), "
              f"peak RSS {peak:.0f} MiB ({len(files)} x ragassay traces import)", flush=True)  # fmt: skip
        command = [sys.executable, __file__, "--worker", str(project), str(n), str(args.every)]
        wall, peak, _, cpu = timed(command, project, echo=True)
        shape = f"{len(METRICS)} lexical metrics, batch {args.batch}"
        shape += f", sample {args.sample}" if args.sample else ""
        print(f"watch:      {n:,} traces in {wall:.1f} s (process), {n / wall:,.0f} traces/s ({n / cpu:,.0f} per CPU "
              f"second), peak RSS {peak:.0f} MiB ({shape})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
