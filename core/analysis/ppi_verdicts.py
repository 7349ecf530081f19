"""Prediction-powered verdicts: a paired difference decided on people's labels of a subset, corrected by the
judge's scores on every sample (``compare``/``gate``/``plan --labelled METRIC=RUBRIC``; docs/statistics.md, "When
the judge errs").

For system B against baseline A on the samples both scored, with f the metric (on the rubric's scale,
:func:`ragassay.analysis.ppi_labels.judge_scale`) and y the labels (:func:`~.ppi_labels.matched_labels`):

- binary and ordinal rubrics: Y = y_B - y_A on the samples where both answers are labelled, f = f_B - f_A; the
  other paired samples are the unlabelled ones;
- a pairwise rubric: Y = the people's preference of B over A, f = f_B - f_A (scaled onto the preference scale).

The estimate of E[Y], its interval and its p-value come from :func:`ragassay.analysis.ppi.ppi_mean` (PPI++ with
the tuned lambda; Angelopoulos et al., Science 382, 2023; Angelopoulos, Duchi, Zrnic, arXiv:2311.01453): one z,
so the test and the interval agree. The comparisons of the labelled metrics are one Holm family (Holm 1979) as in
:mod:`.paired`: comparison (i) in the order of p-values at alpha / (m - i + 1) while every earlier one was
rejected, later ones at the first non-rejected step's level; each interval at its comparison's level, so "better"
or "worse" is exactly "the interval excludes 0". A comparison with fewer than 2 labelled or 2 unlabelled samples
is undecided (never decided on the judge alone). Beside each: the judge-only interval (the mean of f over every
paired sample, as if the judge were right) and the labels-only interval, at the same level.

The labels say which side is better (a higher label is better on every rubric), so a metric whose lower values
are better is turned round by the scale map. Per system, the same estimator gives each system's mean label.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from .human_labels import HumanLabel, Rubric
from .ppi import PPIResult, ppi_mean
from .ppi_labels import Labelled, Scale, judge_scale, matched_labels

BETTER, WORSE, NO_DIFFERENCE, UNDECIDED = "better", "worse", "no detectable difference", "undecided"
NEED = 2  # labelled and unlabelled samples a comparison needs
METHOD = (
    "prediction-powered inference (PPI++, tuned lambda; Angelopoulos et al. 2023, arXiv:2311.01453): people's "
    "labels of a subset correct the metric on every sample; normal interval and z test from one z, Holm over the "
    "labelled metrics' comparisons, each interval at its Holm level"
)


@dataclasses.dataclass(frozen=True)
class PPIPair:
    """One labelled metric, one system against the baseline: the prediction-powered estimate of the mean label
    difference (system - baseline), its interval at ``level`` and verdict, and what the judge alone would say."""

    metric: str
    rubric: str
    kind: str  # binary | ordinal | pairwise
    baseline: str
    system: str
    n: int  # samples both sides scored
    labelled: int  # of them, with a label difference (both answers labelled, or the pair labelled)
    labels_baseline: int  # the baseline's labelled answers among them (pairwise: labelled pairs)
    labels_system: int
    null: float  # the difference whose rejection decides (0; -margin in the gate's non-inferiority mode)
    estimate: float | None
    low: float | None
    high: float | None
    std_error: float | None
    p_value: float | None  # two-sided, of the difference == null
    p_holm: float | None
    level: float | None  # the level of the interval (its Holm level)
    lam: float | None  # PPI++'s lambda (0: the labels alone, 1: plain PPI)
    judge_mean: float | None  # the judge alone: mean of f over the n samples, with its interval at ``level``
    judge_low: float | None
    judge_high: float | None
    labels_mean: float | None  # the labels alone, at ``level``
    labels_low: float | None
    labels_high: float | None
    verdict: str  # better | worse | no detectable difference | undecided (gate: pass | regression | inconclusive)
    reason: str = ""

    @property
    def unlabelled(self) -> int:
        return self.n - self.labelled


@dataclasses.dataclass(frozen=True)
class PPISystem:
    """One labelled metric, one system: the prediction-powered estimate of its mean label (nominal 95%)."""

    metric: str
    rubric: str
    system: str
    labelled: int
    unlabelled: int
    estimate: float | None
    low: float | None
    high: float | None
    lam: float | None
    judge_mean: float | None
    judge_low: float | None
    judge_high: float | None
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class PPIVerdicts:
    """The prediction-powered verdicts of one run against its baseline."""

    run_id: str
    baseline: str
    alpha: float
    source: str  # where the labels came from
    family: list[str]  # the labelled metrics: they decide
    pairs: list[PPIPair]
    systems: list[PPISystem]
    method: str = METHOD


@dataclasses.dataclass(frozen=True)
class PairData:
    """One comparison's inputs: Y on the labelled samples, f on them and on the others, and the label counts."""

    key: tuple[str, str]  # (system, metric)
    truth: list[float]
    judged_labelled: list[float]
    judged_unlabelled: list[float]
    labels_baseline: int
    labels_system: int
    null: float = 0.0

    @property
    def ready(self) -> bool:
        return len(self.truth) >= NEED and len(self.judged_unlabelled) >= NEED


def pair_data(key, ids: Sequence[str], f_base, f_cand, y_diff: Callable[[str], float | None], counts, null=0.0):
    """:class:`PairData` from per-sample judge arrays of each side (NaN: not scored, on the label scale) and
    ``y_diff(sample)``, the label difference of a sample or None; ``counts``: (baseline's, system's) labels."""
    truth, labelled, unlabelled = [], [], []
    for q, fb, fc in zip(ids, f_base, f_cand):
        if np.isnan(fb) or np.isnan(fc):
            continue
        y = y_diff(q)
        if y is None:
            unlabelled.append(float(fc - fb))
        else:
            truth.append(float(y))
            labelled.append(float(fc - fb))
    return PairData(key, truth, labelled, unlabelled, counts[0], counts[1], null)


def holm(p_values: Sequence[float], alpha: float) -> tuple[list[float], list[float]]:
    """Holm's step-down levels and adjusted p-values (module docstring): (level, p_holm) per p-value."""
    m = len(p_values)
    levels, adjusted = [0.0] * m, [0.0] * m
    running, stopped = 0.0, None
    for rank, i in enumerate(sorted(range(m), key=lambda j: p_values[j])):
        step = alpha / (m - rank)
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
        if stopped is None and p_values[i] > step:
            stopped = step
        levels[i] = step if stopped is None else stopped
    return levels, adjusted


def decide_family(items: Sequence[PairData], alpha: float) -> list[tuple[PPIResult | None, float | None, float | None]]:
    """Each comparison's PPI result at its Holm level, its level and Holm p (None for one not ready)."""
    ready = [i for i, item in enumerate(items) if item.ready]
    first = {i: _ppi(items[i], 0.95, None) for i in ready}
    levels, adjusted = holm([first[i].p_value for i in ready], alpha)
    out: list[tuple[PPIResult | None, float | None, float | None]] = [(None, None, None)] * len(items)
    for i, level, p_holm in zip(ready, levels, adjusted):
        out[i] = (_ppi(items[i], 1 - level, first[i].lam), level, p_holm)
    return out


def _ppi(item: PairData, confidence: float, lam: float | None) -> PPIResult:
    return ppi_mean(
        item.truth, item.judged_labelled, item.judged_unlabelled, confidence=confidence, lam=lam, null=item.null
    )


def undecided_reason(item: PairData) -> str:
    """Why a comparison is undecided: too few labelled or unlabelled samples."""
    if len(item.truth) < NEED:
        return f"undecided: {len(item.truth)} labels, need {NEED}"
    return f"undecided: {len(item.judged_unlabelled)} unlabelled samples, need {NEED}"


def ppi_pair(item: PairData, decided, baseline: str, rubric: Rubric, verdict: str, reason: str = "") -> PPIPair:
    """A :class:`PPIPair` from its inputs and its :func:`decide_family` entry."""
    result, level, p_holm = decided
    judge = result.judge_only if result else None
    alone = result.labels_only if result else None
    n = len(item.truth) + len(item.judged_unlabelled)
    return PPIPair(
        item.key[1], rubric.name, rubric.kind, baseline, item.key[0], n, len(item.truth),
        item.labels_baseline, item.labels_system, item.null,
        *((result.estimate, result.low, result.high, result.std_error, result.p_value) if result else (None,) * 5),
        p_holm, level, result.lam if result else None,
        *((judge.mean, judge.low, judge.high) if judge else (None,) * 3),
        *((alone.mean, alone.low, alone.high) if alone else (None,) * 3),
        verdict, reason,
    )  # fmt: skip


def compare_verdict(result: PPIResult | None, level: float | None, item: PairData) -> tuple[str, str]:
    """better / worse (the interval at its Holm level excludes 0), no detectable difference, or undecided."""
    if result is None:
        return UNDECIDED, undecided_reason(item)
    if result.p_value <= level:
        return (BETTER if result.estimate > item.null else WORSE), ""
    return NO_DIFFERENCE, ""


def side_values(run, labels: Sequence[HumanLabel], item: Labelled, rubric: Rubric) -> tuple[Scale, dict]:
    """The metric's scale map and the matched labels of ``item``'s rubric on ``run``."""
    return judge_scale(run, item.metric, rubric), matched_labels(labels, run, rubric.name)


def preference(matched: dict, q: str, base: str, system: str) -> float | None:
    """The people's preference of ``system`` over ``base`` on sample ``q`` (a pair is oriented by name order)."""
    a, b = sorted((base, system))
    value = matched.get((q, a, b))
    return None if value is None else (value if b == system else -value)
