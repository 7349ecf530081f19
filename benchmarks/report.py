"""Report benchmark (issue 13) on 10,000 samples x 4 systems x 6 metrics.

Part 1 times :func:`ragassay.analysis.verdicts.decide_values`: every cell's mean and BCa interval, every
system's paired permutation test against the baseline, Holm adjustment, effect sizes, MDEs and verdicts.
Part 2 writes the same kind of run (seeded synthetic outputs and metric values) into a results store through
its write API, then times :func:`~ragassay.analysis.verdicts.decide` on the stored run (goal < 5 s) and
:func:`ragassay.html_report.build_report` (goal < 15 s), and prints the HTML size (goal < 10 MB).

    python benchmarks/report.py [--samples 10000] [--systems 4] [--metrics 6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

GOAL_S = 5.0
HTML_GOAL_S = 15.0
HTML_GOAL_BYTES = 10_000_000


def synthetic_values(samples: int, systems: int, metrics: int, seed: int = 0):
    """(system, metric) -> {question_id: score in [0, 1]}: a shared per-sample difficulty plus noise, each
    system a little better than the one before (so that some verdicts are wins)."""
    rng = np.random.default_rng(seed)
    difficulty = rng.random((samples, metrics))
    ids = [f"q{i:06d}" for i in range(samples)]
    names = [f"system{k}" for k in range(systems)]
    values = {}
    for k, name in enumerate(names):
        scores = np.clip(difficulty + 0.005 * k + rng.normal(0, 0.1, (samples, metrics)), 0, 1)
        for j in range(metrics):
            values[(name, f"metric{j}")] = dict(zip(ids, scores[:, j].tolist()))
    return values, names, [f"metric{j}" for j in range(metrics)]


def time_verdicts(samples: int = 10_000, systems: int = 4, metrics: int = 6) -> float:
    """Seconds :func:`decide_values` takes on synthetic scores of this size (printed too)."""
    from ragassay.analysis.verdicts import decide_values

    values, names, columns = synthetic_values(samples, systems, metrics)
    start = time.perf_counter()
    verdicts = decide_values(values, names, columns, {c: "higher" for c in columns})
    seconds = time.perf_counter() - start
    decided = sum(p.verdict in ("better", "worse") for p in verdicts.pairs)
    print(
        f"verdicts: {samples} samples x {systems} systems x {metrics} metrics: {seconds:.2f} s "
        f"(goal < {GOAL_S:.0f} s; {len(verdicts.cells)} cells, {len(verdicts.pairs)} pairs, {decided} decided)"
    )
    return seconds


def write_store_run(store, samples: int, systems: int, metrics: int, seed: int = 0) -> str:
    """A complete synthetic run written through the store's write API; returns its id. Each sample has a
    ``metadata.kind`` of 4 values; each output an answer, 3 contexts with ids, metric values (1% unscored)."""
    import json

    from ragassay.models import MetricValue, RAGOutput, Sample
    from ragassay.store.database import UnitResult

    values, names, columns = synthetic_values(samples, systems, metrics, seed)
    ids = [f"q{i:06d}" for i in range(samples)]
    rows = [
        Sample(
            question_id=q,
            question=f"question {i}?",
            reference_answers=[f"answer {i}"],
            reference_context_ids=[f"doc{i}#0"],
            metadata={"kind": f"kind{i % 4}"},
        )
        for i, q in enumerate(ids)
    ]
    run_id = f"bench-{samples}-{systems}-{metrics}"
    spec = {"metrics": {c: {} for c in columns}, "judges": {}}
    store.create_run(
        {
            "id": run_id,
            "fingerprint": run_id,
            "project": "bench",
            "config_path": "-",
            "config_json": "{}",
            "spec_json": json.dumps(spec),
            "ragassay_version": "0",
            "sample_count": samples,
        },
        [(name, "{}") for name in names],
        rows,
    )
    rng = np.random.default_rng(seed + 1)
    for name in names:
        unscored = rng.random((samples, metrics)) < 0.01
        units = []
        for i, q in enumerate(ids):
            output = RAGOutput(
                answer=f"{name} answers question {i} " + "word " * 30,
                contexts=[f"context {i}-{k} " + "text " * 60 for k in range(3)],
                context_ids=[f"doc{i + k}#0" for k in range(3)],
                latency_s=float(rng.random()),
            )
            scored = [
                MetricValue(metric=c, value=None, unscored_reason="synthetic gap")
                if unscored[i, j]
                else MetricValue(metric=c, value=values[(name, c)][q])
                for j, c in enumerate(columns)
            ]
            units.append(UnitResult(name, q, "ok", output, metrics=scored))
        store.write_units(run_id, units)
    store.finish_run(run_id, "complete", [])
    return run_id


def time_html(samples: int = 10_000, systems: int = 4, metrics: int = 6) -> dict[str, float]:
    """Seconds of ``decide`` and ``build_report`` on a stored synthetic run, and the HTML size (printed)."""
    import tempfile
    from pathlib import Path

    from ragassay.analysis.verdicts import decide
    from ragassay.html_report import build_report
    from ragassay.store import open_store, store_url

    with tempfile.TemporaryDirectory() as folder:
        store = open_store(store_url("results.db", Path(folder)))
        try:
            start = time.perf_counter()
            run_id = write_store_run(store, samples, systems, metrics)
            written = time.perf_counter() - start
            start = time.perf_counter()
            decide(store, run_id)
            decided = time.perf_counter() - start
            start = time.perf_counter()
            page = build_report(store, [run_id])
            built = time.perf_counter() - start
        finally:
            store.close()
    size = len(page.encode("utf-8"))
    print(f"store: wrote {samples} x {systems} outputs with {metrics} metrics each in {written:.1f} s (setup)")
    print(f"decide (stored run): {decided:.2f} s (goal < {GOAL_S:.0f} s)")
    print(f"build_report: {built:.2f} s (goal < {HTML_GOAL_S:.0f} s); HTML {size / 1e6:.2f} MB (goal < 10 MB)")
    return {"decide_s": decided, "build_s": built, "html_bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=4)
    parser.add_argument("--metrics", type=int, default=6)
    args = parser.parse_args()
    time_verdicts(args.samples, args.systems, args.metrics)
    time_html(args.samples, args.systems, args.metrics)


if __name__ == "__main__":
    main()
