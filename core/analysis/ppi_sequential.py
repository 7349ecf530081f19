"""Checking while you label: an anytime-valid prediction-powered decision (``compare --labelled METRIC=RUBRIC
--sequential``; docs/statistics.md, "Checking while you label").

For one comparison (system B against baseline A on a labelled metric, as :mod:`.ppi_verdicts` builds it) the
paired samples are taken in the run's seeded processing order (:func:`ragassay.sampling.seeded_order`, the
order of a sequential run). Sample i has the judge's difference f_i (on the rubric's scale), and, when it is
labelled (xi_i = 1), the people's difference y_i and the probability pi_i with which it was labelled. Its term

    phi_i = lam f_i + (xi_i / pi_i) (y_i - lam f_i)          lam = :data:`LAMBDA` = 1, fixed in advance

has mean E[Y] whatever the judge does, as long as xi_i is drawn with probability pi_i independently of y_i
(Zrnic and Candes, "Active statistical inference", ICML 2024, eq. (3); with lam = 1 and pi = n / N it is the
prediction-powered estimate of Angelopoulos et al. 2023). With |f|, |y| <= r (the rubric's width for a difference,
its largest preference for a pairwise rubric) and pi_i >= pi_min, every term lies in [-B, B],

    B = r (lam (1 / pi_min - 1) + 1 / pi_min),

so the terms are independent bounded draws with mean E[Y], and the betting confidence sequence of
:mod:`.sequential` (Waudby-Smith and Ramdas 2024) on them, checked after every sample, holds E[Y] at every prefix
at once with probability 1 - alpha: stopping at the first sample where it excludes 0 (or lies above -margin) is
valid however the stop was chosen. lambda is never tuned on the data (a lambda fitted after the fact would make
the terms depend on each other).

**pi.** Labels of an active queue carry their pi (for a difference: pi_A pi_B, or pi for one draw on both sides:
:func:`.ppi_verdicts.drawn_difference`); pi_min is the smallest pi among the labels used (labels store only the
drawn samples' pi, so it stands in for the design's smallest, which B should strictly be fixed by). Labels of a
random-order queue carry none: the labelled samples are then a uniformly random n of the N paired samples, and each
is taken as labelled with pi = n / N, the design probability (exactly each sample's probability of being in a
uniform subset of size n; the queue draws a fixed n rather than independent coins, which makes the terms slightly
dependent: the simulation in tests/core/analysis/test_ppi_sequential.py checks coverage under that draw). What the
guarantee covers: for the labels at hand, every prefix of the processing order at once. A team that labels in the
processing order (each session continues where the last stopped, each sample labelled with a probability set
beforehand) reads a longer prefix of one stream at every look, so every look is covered; a queue that spreads each
session's labels over all samples (n grows, so pi = n / N changes every term) gives a new stream per look, each
valid on its own.

The comparisons of the labelled metrics are one family at alpha / m each (Bonferroni, as in a sequential run:
:mod:`.sequential_replay`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError
from ..sampling import seeded_order
from .human_labels import HumanLabel, Rubric
from .ppi_labels import Labelled, check_labelled
from .ppi_verdicts import Drawn, design_of, drawn_difference, preference, side_values
from .sequential import DECISIONS, bounds, settle

LAMBDA = 1.0  # fixed before any label is seen (module docstring)
ACTIVE, RANDOM = "active", "random"


@dataclasses.dataclass(frozen=True)
class Stream:
    """One comparison's samples in processing order: the judge's difference ``f`` (NaN: not paired), the people's
    ``y`` and the probability ``pi`` it was labelled with (both NaN where unlabelled); |f|, |y| <= ``reach``."""

    f: np.ndarray
    y: np.ndarray
    pi: np.ndarray
    reach: float
    design: str  # ACTIVE: each label's own pi; RANDOM: pi = n / N

    @property
    def labelled(self) -> np.ndarray:
        return ~np.isnan(self.y) & ~np.isnan(self.f)


def terms(f: np.ndarray, y: np.ndarray, pi: np.ndarray, lam: float = LAMBDA) -> np.ndarray:
    """phi_i = lam f_i + (xi_i / pi_i) (y_i - lam f_i) (module docstring); NaN where f is NaN (not paired)."""
    f, y, pi = (np.asarray(v, dtype=np.float64) for v in (f, y, pi))
    labelled = ~np.isnan(y)
    correction = np.where(labelled, (np.where(labelled, y, 0.0) - lam * f) / np.where(labelled, pi, 1.0), 0.0)
    return lam * f + correction


def term_bound(reach: float, pi_min: float, lam: float = LAMBDA) -> float:
    """B: every term lies in [-B, B] when |f|, |y| <= ``reach`` and each pi >= ``pi_min`` (module docstring)."""
    if not 0.0 < pi_min <= 1.0 or not 0.0 <= lam <= 1.0:
        raise ValueError(f"pi_min must lie in (0, 1] and lambda in [0, 1], got {pi_min} and {lam}")
    return reach * (lam * (1 / pi_min - 1) + 1 / pi_min)


@dataclasses.dataclass(frozen=True)
class SequentialPPI:
    """One comparison decided anytime-valid on people's labels: the confidence sequence over every sample
    [``ci_low``, ``ci_high``] at ``level``, the ``decision`` and where it settled (``settled_at`` samples of the
    processing order, ``labels_at`` of them labelled; the last sample when not settled)."""

    decision: str  # better | worse | non-inferior | not settled
    settled_at: int
    labels_at: int
    n: int  # paired samples
    labelled: int
    estimate: float  # the mean of the terms over every paired sample
    ci_low: float
    ci_high: float
    level: float
    bound: float  # B
    pi_min: float
    design: str
    lam: float = LAMBDA


def decide_stream(stream: Stream, alpha: float, margin: float | None = None, lam: float = LAMBDA) -> SequentialPPI:
    """The confidence sequence of ``stream``'s terms at level ``alpha``, checked after every sample
    (:func:`ragassay.analysis.sequential.settle` with batch 1), and its interval over every sample
    (:func:`ragassay.analysis.sequential.bounds`); ``margin`` (rubric units) also settles it as non-inferior."""
    labelled = stream.labelled
    if not labelled.any():
        raise ValueError("a labelled sequence needs at least one labelled sample")
    pi_min = float(np.min(stream.pi[labelled]))
    width = term_bound(stream.reach, pi_min, lam)
    if margin is not None and not 0 <= margin < width:
        raise ValueError(f"margin must lie in [0, {width}), got {margin}")
    phi = terms(stream.f, np.where(labelled, stream.y, np.nan), stream.pi, lam)
    paths = settle(phi, width, alpha, 1, margin)
    at = int(paths.settled_at[0])
    low, high = bounds(phi, width, alpha, len(phi), margin)
    paired = ~np.isnan(phi)
    return SequentialPPI(
        DECISIONS[int(paths.codes[0])], at, int(labelled[:at].sum()), int(paired.sum()), int(labelled.sum()),
        float(np.mean(phi[paired])), low, high, alpha, width, pi_min, stream.design, lam,
    )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class SequentialPPIPair:
    """One labelled metric, one system against the baseline, decided anytime-valid (:class:`SequentialPPI`, None
    with a ``reason`` when it cannot be)."""

    metric: str
    rubric: str
    kind: str
    baseline: str
    system: str
    seed: int  # of the processing order
    result: SequentialPPI | None
    reason: str = ""


def sequential_ppi(
    run, labels: Sequence[HumanLabel], labelled: Sequence[Labelled], *, baseline: str | None = None, alpha=0.05
) -> list[SequentialPPIPair]:
    """Every system of ``run`` against ``baseline`` (default: its first system) on each labelled metric, each at
    alpha / m (m comparisons), in the run's processing order (``[evaluation] seed``, default 0)."""
    rubrics = check_labelled(run, labelled, labels, "the labels")
    baseline = baseline or run.systems[0]
    seed = int(((run.info.config or {}).get("evaluation") or {}).get("seed", 0) or 0)
    order = np.asarray(seeded_order(seed, run.question_ids, run.clusters), dtype=np.int64)
    others = [s for s in run.systems if s != baseline]
    level = alpha / max(len(labelled) * len(others), 1)
    out = []
    for entry in labelled:
        rubric = rubrics[entry.metric]
        scale, matched = side_values(run, labels, entry, rubric)
        reach = _reach(run, entry, rubric)
        for system in others:
            stream = _stream(run, entry.metric, baseline, system, rubric, scale, matched, reach)
            stream = dataclasses.replace(stream, f=stream.f[order], y=stream.y[order], pi=stream.pi[order])
            head = (entry.metric, rubric.name, rubric.kind, baseline, system, seed)
            if not stream.labelled.any():
                out.append(SequentialPPIPair(*head, None, "undecided: no labelled sample both sides scored"))
                continue
            out.append(SequentialPPIPair(*head, decide_stream(stream, level)))
    return out


def _reach(run, entry: Labelled, rubric: Rubric) -> float:
    """r: the largest |f| and |y| of a difference (or a preference) on the rubric's scale."""
    low, high = run.value_range(entry.metric)
    if low is None or high is None or high <= low:
        raise ConfigError(
            f"--labelled {entry.metric}={entry.rubric} --sequential: {entry.metric} declares no finite range, so its "
            "terms have no known bound and no confidence sequence holds; drop --sequential (the fixed-n verdicts "
            "do not need one)"
        )
    values = rubric.values or (0.0, 1.0)
    return float(max(abs(v) for v in values) if rubric.kind == "pairwise" else max(values) - min(values))


def _stream(run, metric, base, system, rubric, scale, matched, reach) -> Stream:
    """The comparison's f, y and pi in the run's sample order; pi = n / N for random-order labels."""
    fb, fc = (scale.of(run.values(s, metric)) for s in (base, system))
    f = fc - fb
    found: list[Drawn | None] = []
    for q, value in zip(run.question_ids, f):
        if np.isnan(value):
            found.append(None)
        elif rubric.kind == "pairwise":
            found.append(preference(matched, q, base, system))
        else:
            yb, yc = matched.get((base, q)), matched.get((system, q))
            found.append(None if yb is None or yc is None else drawn_difference(yb, yc))
    drawn = [d for d in found if d is not None]
    active = design_of((system, metric), drawn)
    y = np.array([np.nan if d is None else d.value for d in found])
    if active is None:
        share = len(drawn) / max(int((~np.isnan(f)).sum()), 1)
        pi = np.where(np.isnan(y), np.nan, share)
    else:
        pi = np.array([np.nan if d is None else d.probability for d in found], dtype=np.float64)
    return Stream(f, y, pi, reach, RANDOM if active is None else ACTIVE)
