"""Coverage of prediction-powered intervals on RAGChecker's meta-evaluation data (docs/statistics.md).

For each comparison (tests/ragchecker_meta_coverage.py: model2 over model1 on all 280 instances, E5-Mistral over
BM25 retrieval under the same generator on 40, and each of the 28 pairs of RAG systems on its 10), the target
is the mean human preference over all its instances; over ``--draws`` seeded random labelled subsets of 10%, 25%
and 50% of the instances, the table gives how often the PPI++ interval (``ragassay.analysis.ppi.ppi_mean``,
RAGChecker's difference as the judge's prediction) covers it and its mean width, beside the same for the
labels-only interval. The pairs are summarised by the mean and the lowest coverage over the 28.

    python benchmarks/ragchecker_meta_ppi.py [--draws 1000] [--seed 0] [--scale 2] [--format markdown|json]

Seconds on one core; the same numbers on every machine for the same arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The study is a plain module of the test suite (never imported through a package named `tests`).
sys.path[:0] = [str(REPO / "tests")]

import ragchecker_meta  # noqa: E402
import ragchecker_meta_coverage as study  # noqa: E402

HEADER = (
    "| comparison | aspect (RAGChecker value) | items | labelled | target | PPI coverage | PPI width "
    "| labels-only coverage | labels-only width | lambda at 1 |\n|---|---|---|---|---|---|---|---|---|---|"
)


def _row(name: str, aspect: str, items: str, rows: list[study.Coverage]) -> str:
    first = rows[0]
    if len(rows) == 1:
        ppi, labels, target = f"{first.ppi_coverage:.3f}", f"{first.labels_coverage:.3f}", f"{first.target:+.3f}"
    else:  # the pairs: mean (lowest)
        ppi = f"{_mean(rows, 'ppi_coverage'):.3f} ({min(r.ppi_coverage for r in rows):.3f})"
        labels = f"{_mean(rows, 'labels_coverage'):.3f} ({min(r.labels_coverage for r in rows):.3f})"
        target = "each pair's"
    labelled = f"{first.labelled} ({first.fraction:.0%})"
    return (
        f"| {name} | {aspect} ({study.ASPECTS[aspect]}) | {items} | {labelled} | {target} | {ppi} "
        f"| {_mean(rows, 'ppi_width'):.3f} | {labels} | {_mean(rows, 'labels_width'):.3f} "
        f"| {_mean(rows, 'lambda_clipped'):.0%} |"
    )


def _mean(rows: list[study.Coverage], field: str) -> float:
    return sum(getattr(r, field) for r in rows) / len(rows)


def markdown(pooled: list[study.Coverage], pairs: list[study.Coverage]) -> str:
    lines = [HEADER]
    lines += [_row(r.comparison, r.aspect, str(r.items), [r]) for r in pooled]
    for fraction in sorted({r.fraction for r in pairs}):
        rows = [r for r in pairs if r.fraction == fraction]
        lines.append(_row(f"each of the {len(rows)} pairs", "overall", str(rows[0].items), rows))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000, help="random labelled subsets per size (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--scale",
        type=float,
        default=2.0,
        help="multiply RAGChecker's differences (default 2: onto -2..2, as compare --labelled maps them)",
    )
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    args = parser.parse_args()
    pooled, pairs = study.study(ragchecker_meta.instances(), draws=args.draws, seed=args.seed, scale=args.scale)
    if args.format == "json":
        print(json.dumps([dataclasses.asdict(r) for r in pooled + pairs], indent=1))
        return
    print(f"{args.draws} random labelled subsets per row, seed {args.seed}, RAGChecker's differences x {args.scale:g}")
    print("95% intervals; coverage of the target (the mean preference over all the comparison's labels); pairs: mean")
    print("over the pairs (lowest in brackets); lambda at 1: share of draws whose tuned lambda is clipped at 1\n")
    print(markdown(pooled, pairs))


if __name__ == "__main__":
    main()
