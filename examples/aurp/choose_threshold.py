"""Choose the offline lexical fact-checker's default threshold on the shipped labelled set (``labels.jsonl``).

The checker (``ragassay.plugins.judges.fact_check.LexicalFactChecker``) calls an answer correct when at least
``threshold`` of its content words occur in the context. Each candidate threshold 0.00, 0.01, ..., 1.00 is
scored as a detector of correct answers against the labels (``ragassay.analysis.meta_eval``); the default is
the one with the highest Youden's J (recall + specificity - 1; the smallest on a tie). The set is balanced (120
correct, 120 incorrect answers), so J here equals Cohen's kappa and ranks thresholds as accuracy does.

Run from the repository root: ``python examples/aurp/choose_threshold.py``; it prints the sweep, the chosen
threshold, the statistics there with bootstrap intervals, and which kinds of answer pass.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ragassay.analysis.meta_eval import STATISTICS, choose_threshold, evaluate_detector
from ragassay.plugins.judges.fact_check import LexicalFactChecker

LABELS = Path(__file__).resolve().parent / "labels.jsonl"
CANDIDATES = [i / 100 for i in range(101)]


def load_labels(path: Path = LABELS) -> list[dict]:
    """The labelled rows."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def judged_at(rows: list[dict], threshold: float) -> list[bool | None]:
    """The lexical checker's verdict on every row at ``threshold`` (answer against its context)."""
    checker = LexicalFactChecker(threshold)
    return [checker.check_now(row["answer"], row["context"]).correct for row in rows]


def chosen_threshold(rows: list[dict]) -> float:
    """The candidate threshold with the highest Youden's J on ``rows``."""
    truth = [row["label"] == "correct" for row in rows]
    threshold, _ = choose_threshold(CANDIDATES, truth, lambda t: judged_at(rows, t))
    return threshold


def main() -> None:
    rows = load_labels()
    truth = [row["label"] == "correct" for row in rows]
    threshold = chosen_threshold(rows)
    for candidate in CANDIDATES[::5]:
        report = evaluate_detector(f"{candidate:.2f}", truth, judged_at(rows, candidate), resamples=0)
        stats = [(name, report.statistic(name).value) for name in STATISTICS]
        values = "  ".join(f"{k} {'-' if v is None else f'{v:.3f}'}" for k, v in stats)
        print(f"threshold {candidate:.2f}: {values}")
    judged = judged_at(rows, threshold)
    report = evaluate_detector(f"lexical@{threshold:.2f}", truth, judged)
    print(f"\nchosen threshold (max Youden's J): {threshold:.2f} on {len(rows)} labelled answers")
    for name in STATISTICS:
        stat = report.statistic(name)
        print(f"  {name:9} {stat.value:.3f}  95% {stat.method} [{stat.low:.3f}, {stat.high:.3f}]")
    passed = Counter(row["system"] for row, j in zip(rows, judged) if j)
    total = Counter(row["system"] for row in rows)
    for kind in total:
        print(f"  judged correct: {kind:12} {passed[kind]:3}/{total[kind]}")


if __name__ == "__main__":
    main()
