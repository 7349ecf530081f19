"""Prediction-powered verdicts: a paired difference decided on people's labels of a subset, corrected by the
judge's scores on every sample (``compare``/``gate``/``plan --labelled METRIC=RUBRIC``; docs/statistics.md, "When
the judge errs").

For system B against baseline A on the samples both scored, with f the metric (on the rubric's scale,
:func:`ragassay.analysis.ppi_labels.judge_scale`) and y the labels (:func:`~.ppi_labels.matched_items`):

- binary and ordinal rubrics: Y = y_B - y_A on the samples where both answers are labelled, f = f_B - f_A; the
  other paired samples are the unlabelled ones;
- a pairwise rubric: Y = the people's preference of B over A, f = f_B - f_A (scaled onto the preference scale).

The estimate of E[Y], its interval and its p-value come from :func:`ragassay.analysis.ppi.ppi_mean` (PPI++ with
the tuned lambda; Angelopoulos et al., Science 382, 2023; Angelopoulos, Duchi, Zrnic, arXiv:2311.01453): one z,
so the test and the interval agree. Labels an active queue drew (``ragassay label --order active``: each item on
its own with its probability pi, stored with the label) are estimated with
:func:`ragassay.analysis.ppi.ppi_active_mean` instead (Zrnic and Candes, ICML 2024, eq. (3)), each labelled item
weighted by 1 / pi: for a pair item pi is the pair's; for a difference y_B - y_A, both answers labelled, pi_A pi_B
(the queue draws every item independently), or pi when both sides carry the same labels (one draw reused on two
runs). Labels drawn at random and actively cannot be mixed in one estimate (a ConfigError naming both counts).
The comparisons of the labelled metrics are one Holm family (Holm 1979) as in
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

from ..errors import ConfigError
from .human_labels import HumanLabel, Rubric
from .ppi import PPIResult, ppi_active_mean, ppi_mean
from .ppi_labels import Labelled, Matched, Scale, judge_scale, matched_items

BETTER, WORSE, NO_DIFFERENCE, UNDECIDED = "better", "worse", "no detectable difference", "undecided"
NEED = 2  # labelled and unlabelled samples a comparison needs
FEW = 10  # fewer labelled samples than this: the normal interval is rough (docs/statistics.md, RAGChecker's data)
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
    notes: list[str] = dataclasses.field(default_factory=list)  # e.g. turns of conversations taken as independent


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
    probabilities: list[float] | None = None  # per labelled sample, its probability of being labelled (active)

    @property
    def ready(self) -> bool:
        return len(self.truth) >= NEED and len(self.judged_unlabelled) >= NEED


@dataclasses.dataclass(frozen=True)
class Drawn:
    """A sample's label value (a difference or a preference) and the probability it was labelled with (None: a
    random-order queue); ``answers``: the labelled answers it rests on (1 for a pair item, 2 for a difference)."""

    value: float
    probability: float | None
    answers: int = 1
    random: int = 0  # of the answers, how many were labelled in random order


def drawn_difference(base: Matched, cand: Matched) -> Drawn:
    """y_B - y_A of a sample whose two answers are labelled (module docstring): pi_A pi_B for two independent
    draws, pi for one draw both sides carry; None when either was labelled in random order."""
    random = (base.probability is None) + (cand.probability is None)
    if random:
        return Drawn(cand.value - base.value, None, 2, random)
    one_draw = bool(base.draws & cand.draws)
    probability = cand.probability if one_draw else base.probability * cand.probability
    return Drawn(cand.value - base.value, probability, 2, 0)


def drawn_item(item: Matched) -> Drawn:
    """One labelled item (a preference of a pair; a system's answer) with its own probability."""
    return Drawn(item.value, item.probability, 1, int(item.probability is None))


def pair_data(key, ids: Sequence[str], f_base, f_cand, y_diff: Callable[[str], float | Drawn | None], counts, null=0.0):
    """:class:`PairData` from per-sample judge arrays of each side (NaN: not scored, on the label scale) and
    ``y_diff(sample)``, the label difference of a sample (a number: labelled in random order; :class:`Drawn`: with
    how it was drawn) or None; ``counts``: (baseline's, system's) labels."""
    truth, labelled, unlabelled, drawn = [], [], [], []
    for q, fb, fc in zip(ids, f_base, f_cand):
        if np.isnan(fb) or np.isnan(fc):
            continue
        y = y_diff(q)
        if y is None:
            unlabelled.append(float(fc - fb))
        else:
            drawn.append(y if isinstance(y, Drawn) else Drawn(float(y), None, 1, 1))
            truth.append(float(drawn[-1].value))
            labelled.append(float(fc - fb))
    probabilities = design_of(key, drawn)
    return PairData(key, truth, labelled, unlabelled, counts[0], counts[1], null, probabilities)


def design_of(key, drawn: Sequence[Drawn]) -> list[float] | None:
    """The labelled samples' probabilities when an active queue drew them all, None when none was; labels of
    both designs in one comparison are a ConfigError naming how many answers each has."""
    random = sum(d.random for d in drawn)
    active = sum(d.answers for d in drawn) - random
    if not active:
        return None
    if random:
        system, metric = key
        raise ConfigError(
            f"{metric}, {system}: {active} labelled answer(s) were drawn by an active queue (with a probability) "
            f"and {random} in random order (without one); the two designs cannot be mixed in one estimate. "
            "Decide on one kind: a labels file (--labels FILE) holding only one queue's labels."
        )
    return [float(d.probability) for d in drawn]


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
    return estimate(item.truth, item.judged_labelled, item.judged_unlabelled, item.probabilities, confidence, lam,
                    item.null)  # fmt: skip


def estimate(truth, judged_labelled, judged_unlabelled, probabilities, confidence=0.95, lam=None, null=0.0):
    """PPI++ (:func:`ppi_mean`) for labels drawn at random (``probabilities`` None), else the active estimate
    (:func:`ppi_active_mean`): each labelled item with its probability, the unlabelled ones' terms need none
    (1.0 is passed)."""
    if probabilities is None:
        return ppi_mean(truth, judged_labelled, judged_unlabelled, confidence=confidence, lam=lam, null=null)
    rest = len(judged_unlabelled)
    return ppi_active_mean(
        [*judged_labelled, *judged_unlabelled], [*truth, *[None] * rest], [*probabilities, *[1.0] * rest],
        confidence=confidence, lam=lam, null=null,
    )  # fmt: skip


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
    """The metric's scale map and the matched labels of ``item``'s rubric on ``run`` (item -> :class:`Matched`)."""
    return judge_scale(run, item.metric, rubric), matched_items(labels, run, rubric.name)


def preference(matched: dict, q: str, base: str, system: str) -> Drawn | None:
    """The people's preference of ``system`` over ``base`` on sample ``q`` (a pair is oriented by name order)."""
    a, b = sorted((base, system))
    found = matched.get((q, a, b))
    if found is None:
        return None
    return dataclasses.replace(drawn_item(found), value=found.value if b == system else -found.value)


INDEPENDENT_TURNS = (
    "the samples are turns of {n} conversations: the prediction-powered intervals treat turns as independent, "
    "so they may be too narrow where turns of one conversation go wrong together"
)


def turns_note(run) -> list[str]:
    """One warning line when ``run``'s samples are turns of conversations (:attr:`RunData.conversations`)."""
    count = getattr(run, "conversations", None)
    return [] if count is None else [INDEPENDENT_TURNS.format(n=count)]


def few_labels_notes(pairs: Sequence[PPIPair]) -> list[str]:
    """A note for each decided comparison that rests on fewer than :data:`FEW` labelled samples: its normal
    interval's standard error comes from a handful of values (on RAGChecker's meta-evaluation data, intervals from
    2 labels covered in about 6 draws of 10; docs/statistics.md)."""
    return [
        f"{p.system} vs {p.baseline} on {p.metric} rests on {p.labelled} labelled samples: an interval from fewer "
        f"than {FEW} is rough; label more before trusting it"
        for p in pairs
        if p.estimate is not None and p.labelled < FEW
    ]
