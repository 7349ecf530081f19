"""Runner overhead: 10,000 samples, a system that answers instantly, the lexical metrics, SQLite.

Prints samples/s end to end (config load, dataset read, run, every result persisted) and peak memory.
Goal (issue 21): at least 3,000 samples/s on a quiet 2-core machine (issue 10: 2,500; issue 2: 2,000).
``--metrics`` replaces the six lexical metrics (comma-separated names; ``docs/watch.md`` runs the watch's two).

    python benchmarks/runner_overhead.py [--samples 10000] [--concurrency 8] [--metrics a,b]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import textwrap
import time
from pathlib import Path

import ragassay
from ragassay import RAGOutput, RAGSystem, hookimpl


class InstantRAG(RAGSystem):
    """Answers at once with a fixed sentence and the sample's reference contexts."""

    name = "instant"

    async def answer(self, sample):
        return RAGOutput(
            answer=f"The answer is {sample.reference_answers[0]} as the source says.",
            contexts=sample.reference_contexts,
            context_ids=sample.reference_context_ids,
            retrieved=True,
        )


class Plugin:
    @hookimpl
    def register_rags(self, register):
        register(InstantRAG)


METRICS = ["token_recall", "k_precision", "exact_match", "contains_answer", "context_mrr", "recall_at_k"]


def write_project(root: Path, samples: int, concurrency: int, metrics: list[str]) -> Path:
    with open(root / "qa.jsonl", "w", encoding="utf-8") as handle:
        for i in range(samples):
            handle.write(
                json.dumps(
                    {
                        "question_id": f"q{i}",
                        "question": f"What is the value of item number {i} in the catalogue?",
                        "reference_answers": [f"value {i * 7 % 1000}"],
                        "reference_contexts": [f"Item number {i} in the catalogue has value {i * 7 % 1000}."],
                        "reference_context_ids": [f"doc{i % 500}"],
                    }
                )
                + "\n"
            )
    config = root / "ragassay.toml"
    config.write_text(
        textwrap.dedent(f"""
        [project]
        concurrency = {concurrency}
        [dataset]
        options = {{ path = "qa.jsonl" }}
        [systems.instant]
        rag = "bench/instant"
        [evaluation]
        metrics = {json.dumps(metrics)}
    """)
    )
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--metrics", default=",".join(METRICS), help="comma-separated metric names")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = write_project(Path(tmp), args.samples, args.concurrency, args.metrics.split(","))
        start = time.perf_counter()
        summary = ragassay.run(config, plugins=[("bench", Plugin())])
        wall = time.perf_counter() - start
        db = Path(tmp) / "ragassay-results.db"
        import sqlite3

        con = sqlite3.connect(db)
        stored = con.execute("select count(*) from metric_values").fetchone()[0]
        con.close()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert summary.completed == args.samples and summary.failed == 0
    print(f"samples:            {args.samples}")
    print(f"metric values:      {stored} stored")
    print(f"wall time:          {wall:.2f} s (run loop {summary.elapsed_s:.2f} s)")
    print(f"throughput:         {args.samples / wall:,.0f} samples/s end to end (goal >= 3,000)")
    print(f"peak memory (RSS):  {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
