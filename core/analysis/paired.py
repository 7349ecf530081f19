"""Paired comparison of two systems on the same samples: is B really better than A?

For one metric, take the samples both systems scored, the per-sample differences d_i = b_i - a_i, their mean,
and a 95% percentile-bootstrap confidence interval of the mean (Efron & Tibshirani 1993, ch. 13; resampling
samples with replacement, so the pairing is kept). Wins, ties and losses count samples with d_i > 0, = 0, < 0.
An interval that excludes 0 means the difference is unlikely to be resampling noise on this data set.
"""

from __future__ import annotations

import dataclasses
import random
import statistics
from collections.abc import Mapping


@dataclasses.dataclass
class PairedDifference:
    """Mean difference (B - A) of one metric with its bootstrap interval and win/tie/loss counts."""

    metric: str
    n: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    ci_low: float | None
    ci_high: float | None
    wins: int
    ties: int
    losses: int

    @property
    def significant(self) -> bool:
        """True when the 95% interval excludes zero."""
        return self.ci_low is not None and (self.ci_low > 0 or self.ci_high < 0)


def paired_difference(
    metric: str,
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedDifference:
    """Compare per-sample values ``a`` and ``b`` (question_id -> value) on the samples both have."""
    ids = sorted(set(a) & set(b))
    diffs = [b[q] - a[q] for q in ids]
    wins = sum(d > 0 for d in diffs)
    losses = sum(d < 0 for d in diffs)
    if not diffs:
        return PairedDifference(metric, 0, None, None, None, None, None, 0, 0, 0)
    low, high = _bootstrap_interval(diffs, resamples, seed, confidence)
    return PairedDifference(
        metric,
        len(ids),
        statistics.fmean(a[q] for q in ids),
        statistics.fmean(b[q] for q in ids),
        statistics.fmean(diffs),
        low,
        high,
        wins,
        len(diffs) - wins - losses,
        losses,
    )


def _bootstrap_interval(diffs: list[float], resamples: int, seed: int, confidence: float) -> tuple[float, float]:
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    return means[int(tail * (resamples - 1))], means[int((1 - tail) * (resamples - 1))]
