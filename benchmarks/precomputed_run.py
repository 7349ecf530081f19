"""``ragassay run`` of precomputed outputs: N samples (default 100,000), the lexical metrics, SQLite.

Writes a dataset and a file of precomputed outputs (the shape of the Unitxt RAG outputs: answer, contexts and
their ids), runs the real CLI (``python -m ragassay run``) in a child process and prints its wall time and peak
resident memory (the child's ``ru_maxrss``): everything the command holds, from reading the config to the last
stored row. Goal (issue 21): under 300 MiB at 100,000 samples.

    python benchmarks/precomputed_run.py [--samples 100000] [--quiet]

By default the command prints its comparison table at the end, as a user sees it (``--quiet``: ``run -q``, the
run alone).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

METRICS = ["token_recall", "token_f1", "k_precision", "exact_match", "contains_answer", "context_mrr", "recall_at_k"]


def write_project(root: Path, samples: int) -> Path:
    """qa.jsonl, outputs.jsonl (one row per sample) and ragassay.toml under ``root``."""
    with open(root / "qa.jsonl", "w", encoding="utf-8") as qa, open(root / "outputs.jsonl", "w") as out:
        for i in range(samples):
            value = i * 7 % 1000
            context = f"Item number {i} in the catalogue has value {value}."
            qa.write(
                json.dumps(
                    {
                        "question_id": f"q{i}",
                        "question": f"What is the value of item number {i} in the catalogue?",
                        "reference_answers": [f"value {value}"],
                        "reference_contexts": [context],
                        "reference_context_ids": [f"doc{i}"],
                    }
                )
                + "\n"
            )
            out.write(
                json.dumps(
                    {
                        "question_id": f"q{i}",
                        "answer": f"The catalogue says item {i} has value {value}.",
                        "contexts": [context, f"Item number {i + 1} in the catalogue has value {value + 7}."],
                        "context_ids": [f"doc{i}", f"doc{i + 1}"],
                    }
                )
                + "\n"
            )
    config = root / "ragassay.toml"
    config.write_text(
        textwrap.dedent(f"""
        [project]
        concurrency = 8
        [dataset]
        options = {{ path = "qa.jsonl" }}
        [systems.mine]
        rag = {{ name = "precomputed", options = {{ path = "outputs.jsonl" }} }}
        [evaluation]
        metrics = {json.dumps(METRICS)}
    """)
    )
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--quiet", action="store_true", help="run -q: no progress bar, no comparison table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragassay-precomputed-") as tmp:
        config = write_project(Path(tmp), args.samples)
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "ragassay", "run", str(config), *(["-q"] if args.quiet else [])],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"ragassay run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # Linux: KiB
    print(f"command:            ragassay run{' -q' if args.quiet else ''} ({args.samples:,} samples)")
    print(f"wall time:          {wall:.1f} s ({args.samples / wall:,.0f} samples/s end to end)")
    print(f"peak memory (RSS):  {peak_mib:.0f} MiB (goal < 300 MiB at 100,000 samples)")


if __name__ == "__main__":
    main()
