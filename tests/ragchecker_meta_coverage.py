"""How often prediction-powered intervals cover the all-labels preference on RAGChecker's meta-evaluation data.

A comparison is a set of instances with, for each, Y = the people's preference of system B's response over A's
(the mean of the two annotators' labels, -2..2) and f = RAGChecker's value of B's response minus A's (the judge's
prediction of Y, as ``ragassay compare --labelled`` forms it). The target is the mean of Y over all instances
of the comparison: what labelling everything would say. Each draw labels a uniformly random subset of n
instances; :func:`ragassay.analysis.ppi.ppi_mean` (PPI++, tuned lambda) gives the prediction-powered interval from
the labelled Y and f and the unlabelled f, and beside it the labels-only interval (the labelled Y alone). Over
``draws`` seeded draws per size: the share of intervals that cover the target, and their mean width.

Comparisons (:func:`comparisons`): ``model2 over model1`` (all 280 instances, the paper's orientation);
``e5_mistral over bm25`` (the 40 instances pairing the two retrievers under the same generator); and each pair
of RAG systems (B over A in name order) with at least ``min_pair`` instances, reported together (the mean and
the lowest coverage over the pairs).

Shared by ``tests/core/analysis/test_ppi_ragchecker_meta.py`` and ``benchmarks/ragchecker_meta_ppi.py``: import it
as ``ragchecker_meta_coverage`` with tests/ on ``sys.path``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ragassay.analysis.ppi import ppi_mean

#: the people's aspect -> RAGChecker's value read against it (paper, Table 2)
ASPECTS = {"overall": "f1", "correctness": "precision", "completeness": "recall"}
FRACTIONS = (0.10, 0.25, 0.50)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Y and f per instance of one question (module docstring)."""

    name: str
    truth: np.ndarray  # Y: the mean preference of B over A per instance
    judged: np.ndarray  # f: RAGChecker's value of B minus A per instance

    @property
    def target(self) -> float:
        return float(self.truth.mean())


@dataclasses.dataclass(frozen=True)
class Coverage:
    """Coverage and mean width of the PPI and labels-only intervals at one labelled-subset size."""

    comparison: str
    aspect: str
    items: int
    fraction: float  # the labelled share asked for; labelled: what it rounds to (at least 2, at most items - 2)
    labelled: int
    draws: int
    target: float
    ppi_coverage: float
    ppi_width: float
    labels_coverage: float
    labels_width: float
    lambda_mean: float
    lambda_clipped: float  # share of draws whose tuned lambda sat at its upper bound, 1


def _oriented(item: dict, a: str, b: str, aspect: str) -> tuple[float, float]:
    """(Y, f) of B over A for an instance of the pair (a, b), whichever was model1."""
    y = float(np.mean([label[aspect] for label in item["labels"]]))
    f = item["model2"]["ragchecker"][ASPECTS[aspect]] - item["model1"]["ragchecker"][ASPECTS[aspect]]
    return (y, f) if item["model2"]["name"] == b else (-y, -f)


def _comparison(name: str, pairs: list[tuple[dict, str, str]], aspect: str, scale: float) -> Comparison:
    values = np.array([_oriented(item, a, b, aspect) for item, a, b in pairs], dtype=float)
    return Comparison(name, values[:, 0], scale * values[:, 1])


def comparisons(
    items: Sequence[dict], aspect: str, min_pair: int = 10, scale: float = 2.0
) -> tuple[list[Comparison], list[Comparison]]:
    """(the pooled comparisons, the per-pair ones) of ``aspect`` (module docstring); f multiplied by ``scale``."""
    positions = [(item, item["model1"]["name"], item["model2"]["name"]) for item in items]
    retrievers = []
    for item in items:
        first, second = item["model1"]["name"], item["model2"]["name"]
        if {first.split("_")[0], second.split("_")[0]} == {"bm25", "e5"} and _generator(first) == _generator(second):
            bm25, e5 = sorted((first, second))
            retrievers.append((item, bm25, e5))
    pooled = [
        _comparison("model2 over model1", positions, aspect, scale),
        _comparison("e5_mistral over bm25", retrievers, aspect, scale),
    ]
    by_pair: dict[tuple[str, str], list[tuple[dict, str, str]]] = {}
    for item in items:
        a, b = sorted((item["model1"]["name"], item["model2"]["name"]))
        by_pair.setdefault((a, b), []).append((item, a, b))
    pairs = [
        _comparison(f"{b} over {a}", found, aspect, scale)
        for (a, b), found in sorted(by_pair.items())
        if len(found) >= min_pair
    ]
    return pooled, pairs


def _generator(system: str) -> str:
    return system.removeprefix("bm25_").removeprefix("e5_mistral_")


def labelled_count(items: int, fraction: float) -> int:
    """round(fraction x items), kept within 2 .. items - 2 (PPI needs two labelled and two unlabelled items)."""
    return min(max(round(fraction * items), 2), items - 2)


def coverage(comparison: Comparison, aspect: str, fraction: float, draws: int, seed: int) -> Coverage:
    """Coverage of ``comparison.target`` over ``draws`` random subsets of :func:`labelled_count` instances."""
    rng = np.random.default_rng(seed)
    labelled = labelled_count(len(comparison.truth), fraction)
    big_n, target = len(comparison.truth), comparison.target
    hits = np.zeros((draws, 2), dtype=bool)
    widths = np.zeros((draws, 2))
    lambdas = np.zeros(draws)
    for draw in range(draws):
        chosen = np.zeros(big_n, dtype=bool)
        chosen[rng.choice(big_n, size=labelled, replace=False)] = True
        result = ppi_mean(
            comparison.truth[chosen].tolist(), comparison.judged[chosen].tolist(), comparison.judged[~chosen].tolist()
        )
        alone = result.labels_only
        hits[draw] = (result.low <= target <= result.high, alone.low <= target <= alone.high)
        widths[draw] = (result.width, alone.width)
        lambdas[draw] = result.lam
    return Coverage(
        comparison.name, aspect, big_n, fraction, labelled, draws, target,
        float(hits[:, 0].mean()), float(widths[:, 0].mean()), float(hits[:, 1].mean()), float(widths[:, 1].mean()),
        float(lambdas.mean()), float((lambdas >= 1.0).mean()),
    )  # fmt: skip


def study(
    items: Sequence[dict],
    *,
    aspects: Sequence[str] = tuple(ASPECTS),
    fractions: Sequence[float] = FRACTIONS,
    draws: int = 1000,
    seed: int = 0,
    min_pair: int = 10,
    scale: float = 2.0,
) -> tuple[list[Coverage], list[Coverage]]:
    """(coverage of each pooled comparison, aspect and fraction; coverage of each pair of RAG systems and
    fraction, overall aspect only, one row per distinct labelled count). Draw streams are seeded by (seed, comparison, aspect, fraction). ``scale``
    multiplies f (RAGChecker's differences lie in -1..1, the preferences in -2..2; PPI++'s lambda is clipped to
    [0, 1], so a judge on a narrower scale than the labels cannot be given its full weight)."""
    pooled_rows, pair_rows = [], []
    for a, aspect in enumerate(aspects):
        pooled, pairs = comparisons(items, aspect, min_pair, scale)
        for c, comparison in enumerate(pooled):
            for k, fraction in enumerate(fractions):
                pooled_rows.append(coverage(comparison, aspect, fraction, draws, _seed(seed, 0, c, a, k)))
        if aspect != "overall":
            continue
        for c, comparison in enumerate(pairs):
            counts = [labelled_count(len(comparison.truth), fraction) for fraction in fractions]
            for k, fraction in enumerate(fractions):
                if counts[k] not in counts[:k]:  # a small pair: two fractions may round to the same count
                    pair_rows.append(coverage(comparison, aspect, fraction, draws, _seed(seed, 1, c, a, k)))
    return pooled_rows, pair_rows


def _seed(*parts: int) -> int:
    """One int from the parts (numpy seeds a generator from it the same way on every machine)."""
    value = 0
    for part in parts:
        value = value * 1009 + part
    return value
