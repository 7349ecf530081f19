"""Is one cluster's mean higher than another's? A bootstrap interval of the difference, and a plain answer.

GRAMMAR's Table 2 asks, per metric, whether it scores D_robust higher than D_non-robust ("Success?"). Comparing
two point estimates (0.635 vs 0.630) says nothing about noise, so each answer comes with a 95% bootstrap
interval of the difference of the two clusters' means (an unpaired design: the clusters hold different
queries, so each resample draws within each cluster independently; ``scipy.stats.bootstrap`` with
``paired=False``, BCa, 1000 resamples, seeded), and the answer is

- **yes** when the interval lies above 0 (the robust cluster scores higher),
- **no** when it lies below 0 (the non-robust cluster scores higher),
- **not detectable** when it contains 0.

Without an interval (fewer than 2 values in a cluster, no variation within either cluster, or a degenerate
bootstrap distribution) the answer is None and ``reason`` says why.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

DIFFERENCE_SEED = 0
N_RESAMPLES = 1000
CONFIDENCE = 0.95
YES, NO, NOT_DETECTABLE = "yes", "no", "not detectable"


@dataclasses.dataclass(frozen=True)
class DifferenceInterval:
    """mean(first) - mean(second), its bootstrap interval and the answer; None values come with a reason."""

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    n_first: int
    n_second: int
    answer: str | None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def difference_interval(
    first: Sequence[float], second: Sequence[float], *, seed: int = DIFFERENCE_SEED, n_resamples: int = N_RESAMPLES
) -> DifferenceInterval:
    """Unpaired bootstrap interval of mean(first) - mean(second) and its yes / no / not detectable answer."""
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    difference = float(a.mean() - b.mean()) if len(a) and len(b) else None
    reason = _no_interval_reason(a, b)
    if reason is not None:
        return DifferenceInterval(difference, None, None, len(a), len(b), None, reason)
    low, high = _bootstrap(a, b, seed, n_resamples)
    if not (np.isfinite(low) and np.isfinite(high)):
        reason = "degenerate bootstrap distribution: the BCa interval is undefined"
        return DifferenceInterval(difference, None, None, len(a), len(b), None, reason)
    answer = YES if low > 0 else NO if high < 0 else NOT_DETECTABLE
    return DifferenceInterval(difference, float(low), float(high), len(a), len(b), answer)


def _no_interval_reason(a: np.ndarray, b: np.ndarray) -> str | None:
    if min(len(a), len(b)) < 2:
        return f"fewer than 2 values in a cluster ({len(a)} and {len(b)})"
    if np.all(a == a[0]) and np.all(b == b[0]):
        return "no variation within either cluster: the bootstrap cannot estimate an interval"
    return None


def _bootstrap(a: np.ndarray, b: np.ndarray, seed: int, n_resamples: int) -> tuple[float, float]:
    from scipy.stats import bootstrap

    def statistic(x, y, axis=-1):
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a degenerate distribution gives NaN, reported with its reason
        result = bootstrap(
            (a, b),
            statistic,
            paired=False,
            vectorized=True,
            n_resamples=n_resamples,
            batch=max(1, (1 << 20) // (len(a) + len(b))),
            confidence_level=CONFIDENCE,
            method="BCa",
            rng=np.random.default_rng(seed),
        )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
