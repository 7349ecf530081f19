"""Scale: driver memory and throughput at 100k, 1M and 5M samples, local vs Ray, SQLite vs PostgreSQL; and an
LLM-bound run under a shared budget.

Two parts (both by default):

``throughput``: a system that answers at once, the lexical metrics, each size of ``--sizes`` (default 100,000,
1,000,000 and 5,000,000 samples). Each configuration (size x store x executor) runs in a fresh process and
prints samples/s (run loop and end to end) and the driver's memory: its peak RSS over the whole process (config,
dataset, plan and run), its RSS when the run loop starts and samples every 10% of the loop (flat means results
stream through the driver without piling up). A last table gives each configuration's peak at every size and its
growth from the smallest to the largest size (the goal: under 200 MiB everywhere, under 10% growth).

``llm``: a RAG whose generator calls an OpenAI-compatible server on 127.0.0.1 that answers after 200 ms and
counts the calls in flight. 1, 2 and 4 Ray workers share one provider budget (``concurrency``); the figures are
wall time against the ideal (calls x delay / budget) and the most calls the server ever saw at once (must not
exceed the budget).

    python benchmarks/scale.py [throughput|llm|all] [--sizes 100000,1000000,5000000] [--executors local,ray]
        [--stores sqlite,postgresql] [--postgres-url URL] [--calls 400] [--budget 8] [--llm-workers 1,2,4]

The 5M-sample configurations take long on a small machine (about 25 minutes each for SQLite on two cores);
``--sizes 100000,1000000`` leaves them out. PostgreSQL: ``--postgres-url`` (an existing server), else a
throwaway server is started with initdb (the tests' helper, ``tests/postgres_server.py``) and removed
afterwards; without PostgreSQL binaries that store is skipped with a note.
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
    """Run one (size, executor, store) configuration in this process and print its figures as JSON."""
    import resource

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
                "rss_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,  # Linux: KiB
                "cpu_s": sum(resource.getrusage(resource.RUSAGE_SELF)[:2]),  # the driver's user + system time
                "db_bytes": Path(args.results).stat().st_size if "://" not in args.results else None,
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
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"== throughput: {', '.join(f'{n:,}' for n in sizes)} samples, metrics {', '.join(METRICS)}")
    print(f"   Ray: {args.workers} workers; {os.cpu_count()} CPUs")
    rows = []
    server = None
    try:
        for size in sizes:
            with tempfile.TemporaryDirectory(prefix="ragassay-scale-") as tmp:
                root = Path(tmp)
                write_dataset(root / "qa.jsonl", size)
                for store in stores:
                    for executor in executors:
                        url, server = store_url(store, root, args, server)  # a fresh database for each
                        if url is None:
                            print(f"   {store}: skipped ({server})")
                            server = None
                            break
                        result = run_child(root, url, executor, size, args)
                        rows.append((size, store, executor, result))
                        _print_row(size, store, executor, result)
    finally:
        if server is not None and hasattr(server, "stop"):
            server.stop()
    _print_growth(rows, sizes)


MIB = 1024 * 1024


def _print_row(size: int, store: str, executor: str, r: dict) -> None:
    """One configuration's figures, as soon as it is done (long runs show progress)."""
    print(
        f"{size:>9,} {store:<10} {executor:<6} loop {r['samples'] / r['loop_s']:>6,.0f}/s  end to end "
        f"{r['samples'] / r['wall_s']:>6,.0f}/s  driver peak RSS {r['rss_peak'] / MIB:>4.0f} MiB  "
        f"(at loop start {r['rss_loop_start'] / MIB:.0f}, loop peak {r['rss_loop_peak'] / MIB:.0f})",
        flush=True,
    )
    db = f", results file {r['db_bytes'] / size:,.0f} B/sample" if r.get("db_bytes") else ""
    print(f"{'':<27}driver CPU {r['cpu_s'] * 1e6 / size:,.0f} us/sample{db}", flush=True)
    print(f"{'':<27}RSS every 10% of the loop (MiB): {[round(x / MIB) for x in r['rss_deciles']]}", flush=True)


def _print_growth(rows: list, sizes: list[int]) -> None:
    """Driver peak RSS per configuration at every size, and its growth from the smallest to the largest."""
    peaks: dict[tuple[str, str], dict[int, float]] = {}
    for size, store, executor, r in rows:
        peaks.setdefault((store, executor), {})[size] = r["rss_peak"] / MIB
    print("\ndriver peak RSS (MiB) by size; growth from the smallest to the largest size")
    print(f"{'store':<10} {'executor':<8} " + " ".join(f"{n:>10,}" for n in sizes) + "   growth")
    for (store, executor), by_size in peaks.items():
        cells = " ".join(f"{by_size[n]:>10.0f}" if n in by_size else f"{'-':>10}" for n in sizes)
        measured = [by_size[n] for n in sizes if n in by_size]
        growth = f"{(measured[-1] / measured[0] - 1) * 100:+.1f}%" if len(measured) > 1 else "-"
        print(f"{store:<10} {executor:<8} {cells}   {growth}")


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


def run_child(root: Path, url: str, executor: str, samples: int, args: argparse.Namespace) -> dict:
    command = [sys.executable, __file__, "_one", "--root", str(root), "--results", url, "--executor", executor]
    command += ["--samples", str(samples), "--workers", str(args.workers)]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
    if done.returncode != 0:
        raise SystemExit(f"{executor} on {url.split(':')[0]} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", default="all", choices=["all", "throughput", "llm", "_one"])
    parser.add_argument("--sizes", default="100000,1000000,5000000", help="Sample counts, comma-separated.")
    parser.add_argument("--samples", type=int, help=argparse.SUPPRESS)  # one size (the child process)
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
