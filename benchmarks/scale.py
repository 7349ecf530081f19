"""Scale: 1,000,000 samples, local vs Ray, SQLite vs PostgreSQL; and an LLM-bound run under a shared budget.

Two parts (both by default):

``throughput``: a system that answers at once, the lexical metrics, N samples (default 1,000,000). Each
configuration (executor x store) runs in a fresh process and prints samples/s (run loop and end to end) and the
driver's memory: RSS when the run loop starts, its peak during the loop, and samples every 10% of the loop (flat
means results stream through the driver without piling up).

``llm``: a RAG whose generator calls an OpenAI-compatible server on 127.0.0.1 that answers after 200 ms and
counts the calls in flight. 1, 2 and 4 Ray workers share one provider budget (``concurrency``); the figures are
wall time against the ideal (calls x delay / budget) and the most calls the server ever saw at once (must not
exceed the budget).

    python benchmarks/scale.py [throughput|llm|all] [--samples 1000000] [--executors local,ray]
        [--stores sqlite,postgresql] [--postgres-url URL] [--calls 400] [--budget 8] [--llm-workers 1,2,4]

PostgreSQL: ``--postgres-url`` (an existing server), else a throwaway server is started with initdb (the
tests' helper) and removed afterwards; without PostgreSQL binaries that store is skipped with a note.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # the throwaway PostgreSQL server and the scripted LLM server

# The instant system of the runner-overhead benchmark; Ray workers cannot import benchmarks/, so its module is
# pickled by value (cloudpickle) rather than by reference.
import cloudpickle  # noqa: E402
import runner_overhead  # noqa: E402
from runner_overhead import Plugin  # noqa: E402

import ragassay  # noqa: E402

cloudpickle.register_pickle_by_value(runner_overhead)


METRICS = ["token_recall", "token_f1", "k_precision", "exact_match", "contains_answer", "context_mrr"]


def write_dataset(path: Path, samples: int) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(samples):
            value = i * 7 % 1000
            handle.write(
                f'{{"question_id": "q{i}", "question": "What is the value of item number {i} in the catalogue?", '
                f'"reference_answers": ["value {value}"], '
                f'"reference_contexts": ["Item number {i} in the catalogue has value {value}."], '
                f'"reference_context_ids": ["doc{i % 500}"]}}\n'
            )


def write_config(root: Path, results: str, executor: str, workers: int) -> Path:
    config = root / f"ragassay-{executor}.toml"
    config.write_text(
        textwrap.dedent(f"""
        [project]
        concurrency = 8
        results = "{results}"
        executor = "{executor}"
        [project.ray]
        workers = {workers}
        batch_size = 512
        batches_in_flight = 2
        [dataset]
        options = {{ path = "qa.jsonl" }}
        [systems.instant]
        rag = "bench/instant"
        [evaluation]
        metrics = {json.dumps(METRICS)}
    """)
    )
    return config


class RSSSampler:
    """The process's resident memory, sampled every ``every_s`` seconds in a thread."""

    def __init__(self, every_s: float = 0.5):
        import psutil

        self.process = psutil.Process()
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, args=(every_s,), daemon=True)

    def _loop(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            self.samples.append((time.perf_counter(), self.process.memory_info().rss))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def one_configuration(args: argparse.Namespace) -> None:
    """Run one (executor, store) configuration in this process and print its figures as JSON."""
    root = Path(args.root)
    config = write_config(root, args.results, args.executor, args.workers)
    sampler = RSSSampler()
    marks: dict[str, float] = {}

    def on_start(summary) -> None:
        marks["loop"] = time.perf_counter()
        marks["rss_loop"] = sampler.process.memory_info().rss
        sampler.start()

    start = time.perf_counter()
    summary = ragassay.run(config, plugins=[("bench", Plugin())], new=True, on_start=on_start)
    wall = time.perf_counter() - start
    sampler.stop()
    loop = [rss for t, rss in sampler.samples if t >= marks["loop"]]
    deciles = [loop[min(len(loop) - 1, len(loop) * k // 10)] for k in range(1, 11)] if loop else []
    assert summary.completed == args.samples and summary.failed == 0, summary
    print(
        json.dumps(
            {
                "samples": args.samples,
                "wall_s": wall,
                "loop_s": summary.elapsed_s,
                "rss_loop_start": marks["rss_loop"],
                "rss_loop_peak": max(loop, default=marks["rss_loop"]),
                "rss_deciles": deciles,
                "warnings": summary.warnings,
            }
        )
    )


def throughput(args: argparse.Namespace) -> None:
    executors = args.executors.split(",")
    stores = args.stores.split(",")
    print(f"== throughput: {args.samples:,} samples, metrics {', '.join(METRICS)}; Ray: {args.workers} workers")
    with tempfile.TemporaryDirectory(prefix="ragassay-scale-") as tmp:
        root = Path(tmp)
        write_dataset(root / "qa.jsonl", args.samples)
        server = None
        rows = []
        try:
            for store in stores:
                url, server = store_url(store, root, args, server)
                if url is None:
                    print(f"   {store}: skipped ({server})")
                    server = None
                    continue
                for executor in executors:
                    rows.append((store, executor, run_child(root, url, executor, args)))
                    url, server = store_url(store, root, args, server)  # a fresh database for the next one
        finally:
            if server is not None and hasattr(server, "stop"):
                server.stop()
    mib = 1024 * 1024
    print(f"{'store':<11} {'executor':<9} {'samples/s (loop)':>17} {'end to end':>11} {'RSS start':>10} {'peak':>8}")
    for store, executor, r in rows:
        print(
            f"{store:<11} {executor:<9} {r['samples'] / r['loop_s']:>17,.0f} {r['samples'] / r['wall_s']:>11,.0f} "
            f"{r['rss_loop_start'] / mib:>8.0f}Mi {r['rss_loop_peak'] / mib:>6.0f}Mi"
        )
        print(f"{'':<21} RSS every 10% of the loop (MiB): {[round(x / mib) for x in r['rss_deciles']]}")


def store_url(store: str, root: Path, args: argparse.Namespace, server):
    """(URL, server) for ``store``; (None, reason) when it cannot be had."""
    if store == "sqlite":
        return str(root / f"results-{time.time_ns()}.db"), server
    if args.postgres_url:
        return args.postgres_url, server
    from postgres_server import PostgresServer

    try:
        server = server or PostgresServer.start()
    except Exception as exc:  # noqa: BLE001 - reported, the other store still runs
        return None, f"PostgreSQL could not start: {str(exc)[:300]}"
    return server.create_database(), server


def run_child(root: Path, url: str, executor: str, args: argparse.Namespace) -> dict:
    command = [sys.executable, __file__, "_one", "--root", str(root), "--results", url, "--executor", executor]
    command += ["--samples", str(args.samples), "--workers", str(args.workers)]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
    if done.returncode != 0:
        raise SystemExit(f"{executor} on {url.split(':')[0]} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", default="all", choices=["all", "throughput", "llm", "_one"])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--executors", default="local,ray")
    parser.add_argument("--stores", default="sqlite,postgresql")
    parser.add_argument("--postgres-url", default=None)
    parser.add_argument("--workers", type=int, default=2, help="Ray workers in the throughput part.")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--budget", type=int, default=8)
    parser.add_argument("--llm-workers", default="1,2,4")
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--results", help=argparse.SUPPRESS)
    parser.add_argument("--executor", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part == "_one":
        one_configuration(args)
        return
    if args.part in ("all", "throughput"):
        throughput(args)
    if args.part in ("all", "llm"):
        from scale_llm import llm_bound

        llm_bound(args)


if __name__ == "__main__":
    main()
