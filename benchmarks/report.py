"""Report benchmark (issue 13), part 1: the comparison's statistics on 10,000 samples x 4 systems x 6 metrics.

Times :func:`ragassay.analysis.verdicts.decide_values`: every cell's mean and BCa interval, every system's paired
permutation test against the baseline, Holm adjustment, effect sizes, MDEs and verdicts. Goal: under 5 s.
(Part 2, the HTML report, is added with ``ragassay report --html``.)

    python benchmarks/report.py [--samples 10000] [--systems 4] [--metrics 6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

GOAL_S = 5.0


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=4)
    parser.add_argument("--metrics", type=int, default=6)
    args = parser.parse_args()
    time_verdicts(args.samples, args.systems, args.metrics)


if __name__ == "__main__":
    main()
