"""Agreement among people, the ceiling a judge is measured against: Cohen's kappa for two annotators and
Krippendorff's alpha for any number, with percentile-bootstrap intervals over items.

**Krippendorff's alpha** (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", Annenberg School for
Communication, sections B-E; Hayes & Krippendorff 2007 for the bootstrap over units). Each item u with m_u >= 2
values (the "pairable" items) adds to the coincidence matrix

    o_ck = sum_u (number of ordered pairs of values (c, k) in u from different annotators) / (m_u - 1)

with marginals n_c = sum_k o_ck and n = sum_c n_c. Then

    alpha = 1 - (n - 1) sum_ck o_ck delta_ck^2 / sum_ck n_c n_k delta_ck^2

with the difference function of the level of measurement: **nominal** delta^2 = [c != k]; **interval**
delta^2 = (c - k)^2; **ordinal** delta^2 = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 over the ranks between c and k.
alpha is undefined (None, with the reason) when no item has two values (a single annotator) or every pairable
value is the same (no expected disagreement). In each bootstrap resample an item's coincidences count as often as
the item was drawn (ordinal differences recomputed from the resample's marginals).

Cohen's kappa of two annotators is :func:`ragassay.analysis.agreement.weighted_kappa` on the items both labelled
(unweighted for binary rubrics, quadratic for ordinal ones).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from .agreement import Estimate, _divide, estimate

LEVELS = ("nominal", "ordinal", "interval")


def coincidences(units: Sequence[Sequence[float]], scale: Sequence[float]) -> np.ndarray:
    """(items, K, K) coincidence contributions of each item's values (items with fewer than 2 values add 0)."""
    position = {value: i for i, value in enumerate(scale)}
    k = len(scale)
    out = np.zeros((len(units), k, k))
    for u, values in enumerate(units):
        m = len(values)
        if m < 2:
            continue
        counts = np.zeros(k)
        for v in values:
            counts[position[v]] += 1
        out[u] = (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
    return out


def _differences(level: str, scale: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    """(rows, K, K) squared differences delta^2 for each row of ``marginals`` (rows, K)."""
    rows, k = marginals.shape
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(k), (rows, k, k))
    if level == "interval":
        return np.broadcast_to((scale[:, None] - scale[None, :]) ** 2, (rows, k, k))
    cumulative = np.cumsum(marginals, axis=1)  # ordinal: sum_{g<=c} n_g
    c, kk = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    low, high = np.minimum(c, kk), np.maximum(c, kk)
    between = cumulative[:, high] - cumulative[:, low] + marginals[:, low]  # sum_{g=low..high} n_g
    return (between - (marginals[:, c] + marginals[:, kk]) / 2) ** 2


def alpha_statistic(units: Sequence[Sequence[float]], scale: Sequence[float], level: str = "nominal"):
    """Krippendorff's alpha over item weights (rows, items), as a weighted statistic (module docstring)."""
    if level not in LEVELS:
        raise ValueError(f"level of measurement must be one of {', '.join(LEVELS)}, got {level!r}")
    per_item = coincidences(units, scale)
    k, values = len(scale), np.asarray(scale, dtype=float)
    flat = per_item.reshape(len(units), k * k)

    def alpha(w: np.ndarray) -> np.ndarray:
        observed = (w @ flat).reshape(-1, k, k)
        marginals = observed.sum(axis=2)
        total = marginals.sum(axis=1)
        delta = _differences(level, values, marginals)
        disagreement = (observed * delta).sum(axis=(1, 2))
        expected = np.einsum("rc,rk,rck->r", marginals, marginals, delta)
        return 1 - _divide((total - 1) * disagreement, expected)

    return alpha


def krippendorff_alpha(
    units: Sequence[Sequence[float]], scale: Sequence[float], level: str = "nominal", **bootstrap
) -> Estimate:
    """Krippendorff's alpha with its interval; ``units`` holds each item's values (one per annotator)."""
    pairable = sum(1 for values in units if len(values) >= 2)
    if not pairable:
        return Estimate(None, None, None, 0, "no item has labels from two annotators (alpha needs at least two)")
    return estimate(
        alpha_statistic(units, scale, level),
        len(units),
        undefined="every pairable label has the same value: no disagreement is expected",
        bounds=(-1.0, 1.0),
        **bootstrap,
    )


def by_item(labels: Sequence[tuple[Hashable, str, float]]) -> dict[Hashable, dict[str, float]]:
    """(item, annotator, value) triples -> item -> annotator -> value (the last one wins)."""
    out: dict[Hashable, dict[str, float]] = {}
    for item, annotator, value in labels:
        out.setdefault(item, {})[annotator] = value
    return out


def annotator_pairs(items: dict[Hashable, dict[str, float]]) -> list[tuple[str, str]]:
    """Every pair of annotators, in name order."""
    names = sorted({a for values in items.values() for a in values})
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
