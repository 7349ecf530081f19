"""Retrieval decided on judged qrels, corrected by people's qrels of part of the queries.

For each IR metric (any metric that reads relevance judgements, e.g. ``ndcg_at_k``: trec_eval's measures), every
system's output of every query is scored twice through the metric itself: under the judge's qrels (f, every
query) and, for the queries people judged, under their qrels (Y). Then:

- each system's mean metric under people's qrels gets a prediction-powered estimate and interval (PPI++,
  :func:`ragassay.analysis.ppi.ppi_mean`: the judge's values on every query, corrected by the labelled queries),
  beside what the judge alone and the labels alone give;
- each pair of systems gets a paired verdict from the same estimator on the per-query differences
  (f_A - f_B, Y_A - Y_B), Holm over the metric's pairs: each interval at its pair's Holm level, its p-value from
  the same z, "A better" or "B better" only when that interval excludes 0;
- ranking fidelity: Kendall's tau-b (``scipy.stats.kendalltau``) between the systems ordered by their mean under
  the judge's qrels and under people's, both on the labelled queries, with a seeded bootstrap interval over
  those queries (percentile; resamples where either ranking is all ties are dropped and counted).

The labelled queries must be a uniform random subset of the run's queries for the PPI intervals to be valid
(Angelopoulos et al. 2023); a query enters only when every system's value is scored under the judge's qrels.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from ..models import Unscored
from .ppi import PPIResult, ppi_mean

Qrels = Mapping[str, Mapping[str, int]]
#: Below this many labelled queries a note says the normal-approximation intervals are rough.
SMALL_LABELLED = 30
#: A standard error at most this (relative to the estimate, at least 1) is 0 up to rounding.
NO_SPREAD = 1e-12


@dataclasses.dataclass(frozen=True)
class PairVerdict:
    """A paired comparison of two systems on one metric: the PPI estimate of mean(A - B) and its verdict."""

    a: str
    b: str
    result: PPIResult
    verdict: str  # "a better" | "b better" | "inconclusive" | "no spread"


@dataclasses.dataclass(frozen=True)
class Fidelity:
    """Kendall's tau between the system rankings under judged and people's qrels, with a bootstrap interval."""

    tau: float | None
    low: float | None
    high: float | None
    resamples: int
    dropped: int
    judge_order: list[str]
    human_order: list[str]


@dataclasses.dataclass(frozen=True)
class MetricDecision:
    """One metric: per-system PPI estimates, paired verdicts and ranking fidelity."""

    metric: str
    systems: dict[str, PPIResult]
    pairs: list[PairVerdict]
    fidelity: Fidelity
    notes: list[str]  # queries left out, zero-width intervals, few labels


@dataclasses.dataclass(frozen=True)
class RelevanceReport:
    """Every metric's decisions, the queries they used and what was left out."""

    run_id: str
    labelled: list[str]
    unlabelled: list[str]
    metrics: list[MetricDecision]
    confidence: float
    seed: int
    notes: list[str]


def with_qrels(sample: Any, judgements: Mapping[str, int]) -> Any:
    """``sample`` judged by ``judgements`` only: its relevant ids (grade > 0, highest first) and every grade."""
    relevant = sorted((d for d, g in judgements.items() if g > 0), key=lambda d: (-judgements[d], d))
    metadata = {**sample.metadata, "relevance": dict(judgements)}
    return sample.model_copy(update={"reference_context_ids": relevant, "metadata": metadata})


def metric_value(metric: Any, sample: Any, output: Any) -> float | None:
    """The metric's value for one output (None when unscored or the output is missing)."""
    if output is None:
        return None
    value = metric.score(sample, output)
    if isinstance(value, Unscored):
        return None
    return float(getattr(value, "value", value))


def query_values(run: Any, metric: Any, qrels: Qrels, system: str) -> dict[str, float]:
    """question id -> ``system``'s metric value under ``qrels``, for the run's queries that ``qrels`` judges."""
    values = {}
    for sample in run.samples:
        if sample.question_id in qrels:
            value = metric_value(
                metric, with_qrels(sample, qrels[sample.question_id]), run.payload(system, sample.question_id)
            )
            if value is not None:
                values[sample.question_id] = value
    return values


def decide_relevance(
    run: Any,
    metrics: Mapping[str, Any],
    judged: Qrels,
    human: Qrels,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    resamples: int = 2000,
) -> RelevanceReport:
    """PPI estimates, paired verdicts and ranking fidelity of ``run``'s systems on each metric (module docstring)."""
    for label, metric in metrics.items():
        if "qrels" not in getattr(metric, "requires", ()):
            raise ConfigError(f"metric '{label}' reads no relevance judgements; use an IR metric such as ndcg_at_k")
    if len(run.systems) < 2:
        raise ConfigError(f"run {run.id[:12]} has {len(run.systems)} system; decisions need at least 2")
    notes = [f"{q}: in the people's qrels but not a query of the run" for q in sorted(set(human) - set(run.position))]
    decisions, labelled, unlabelled = [], [], []
    for label, metric in metrics.items():
        f = {s: query_values(run, metric, judged, s) for s in run.systems}
        y = {s: query_values(run, metric, human, s) for s in run.systems}
        items = [q for q in run.question_ids if all(q in f[s] for s in run.systems)]
        labelled = [q for q in items if all(q in y[s] for s in run.systems)]
        unlabelled = [q for q in items if q not in set(labelled)]
        left = len(run.question_ids) - len(items)
        own = [f"{left} queries left out: a system's output there is unscored under the judged qrels"] if left else []
        if len(labelled) < 2 or len(unlabelled) < 2:
            raise ConfigError(
                f"{label}: {len(labelled)} queries with people's qrels and {len(unlabelled)} without; PPI needs at "
                "least 2 of each (give people's qrels for a random part of the queries, not all)"
            )
        decision = _decide(label, run.systems, f, y, labelled, unlabelled, confidence, seed, resamples)
        decisions.append(dataclasses.replace(decision, notes=own + spread_notes(decision, len(labelled))))
    return RelevanceReport(run.id, labelled, unlabelled, decisions, confidence, seed, notes)


def _decide(label, systems, f, y, labelled, unlabelled, confidence, seed, resamples) -> MetricDecision:
    per_system = {
        s: ppi_mean([y[s][q] for q in labelled], [f[s][q] for q in labelled], [f[s][q] for q in unlabelled],
                    confidence=confidence)
        for s in systems
    }  # fmt: skip
    pairs = paired_verdicts(systems, f, y, labelled, unlabelled, confidence)
    fidelity = ranking_fidelity(systems, f, y, labelled, confidence=confidence, seed=seed, resamples=resamples)
    return MetricDecision(label, per_system, pairs, fidelity, [])


def paired_verdicts(systems, f, y, labelled, unlabelled, confidence: float) -> list[PairVerdict]:
    """Every pair's PPI estimate of mean(A - B), Holm over the metric's pairs (Holm 1979, as ``compare``): each
    interval at its pair's Holm level, so a verdict is exactly "the interval excludes 0" and the family-wise error
    stays at 1 - ``confidence``; lambda tuned once, at the nominal level."""
    from .ppi_verdicts import holm

    def diffs(values, a, b, queries):
        return [values[a][q] - values[b][q] for q in queries]

    named = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1 :]]
    data = [(diffs(y, a, b, labelled), diffs(f, a, b, labelled), diffs(f, a, b, unlabelled)) for a, b in named]
    first = [ppi_mean(*d, confidence=confidence) for d in data]
    levels, _ = holm([r.p_value for r in first], 1 - confidence)
    pairs = []
    for (a, b), d, r, level in zip(named, data, first, levels):
        result = ppi_mean(*d, confidence=1 - level, lam=r.lam)
        pairs.append(PairVerdict(a, b, result, pair_verdict(result)))
    return pairs


def no_spread(result: PPIResult) -> bool:
    """Whether the standard error is 0 up to rounding (:data:`NO_SPREAD`)."""
    return result.std_error <= NO_SPREAD * max(1.0, abs(result.estimate))


def pair_verdict(result: PPIResult) -> str:
    """ "a better" or "b better" when the interval excludes 0, else "inconclusive"; "no spread" when the standard
    error is 0 up to rounding (the labelled differences do not vary and the judge adds nothing): no verdict from
    a zero-width interval."""
    if no_spread(result):
        return "no spread"
    return "a better" if result.low > 0 else "b better" if result.high < 0 else "inconclusive"


def spread_notes(decision: MetricDecision, labelled: int) -> list[str]:
    """Notes on intervals of zero width (no verdict is drawn from them) and on few labelled queries."""
    flat = [s for s, r in decision.systems.items() if no_spread(r)]
    flat += [f"{p.a} - {p.b}" for p in decision.pairs if p.verdict == "no spread"]
    notes = []
    if flat:
        notes.append(
            f"zero-width interval for {', '.join(flat)}: the {labelled} labelled values do not "
            "vary; no verdict is drawn from it; label more queries"
        )
    if labelled < SMALL_LABELLED:
        notes.append(
            f"{labelled} labelled queries: the intervals rest on a normal approximation that "
            f"needs more (at least {SMALL_LABELLED} is a common rule)"
        )
    return notes


def ranking_fidelity(
    systems: list[str],
    judged: Mapping[str, Mapping[str, float]],
    human: Mapping[str, Mapping[str, float]],
    queries: list[str],
    *,
    confidence: float = 0.95,
    seed: int = 0,
    resamples: int = 2000,
) -> Fidelity:
    """Kendall's tau-b between the systems' mean values under ``judged`` and ``human`` over ``queries``, with a
    seeded percentile bootstrap over the queries (module docstring)."""
    import numpy as np
    from scipy.stats import kendalltau

    f = np.array([[judged[s][q] for q in queries] for s in systems])
    y = np.array([[human[s][q] for q in queries] for s in systems])
    tau = _tau(kendalltau, f.mean(axis=1), y.mean(axis=1))
    rng = np.random.default_rng(seed)
    taus = []
    for _ in range(resamples):
        pick = rng.integers(0, len(queries), len(queries))
        found = _tau(kendalltau, f[:, pick].mean(axis=1), y[:, pick].mean(axis=1))
        if found is not None:
            taus.append(found)
    alpha = (1 - confidence) / 2
    low, high = (float(np.quantile(taus, alpha)), float(np.quantile(taus, 1 - alpha))) if taus else (None, None)
    return Fidelity(
        tau,
        low,
        high,
        len(taus),
        resamples - len(taus),
        _order(systems, f.mean(axis=1)),
        _order(systems, y.mean(axis=1)),
    )


def _tau(kendalltau, a, b) -> float | None:
    found = kendalltau(a, b).statistic
    return None if found != found else float(found)  # NaN: a ranking that is all ties


def _order(systems: list[str], means) -> list[str]:
    """Systems best first (ties by name)."""
    return [s for _, s in sorted(zip((-float(m) for m in means), systems))]
