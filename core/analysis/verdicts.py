"""Verdicts of a comparison: each cell's mean with a confidence interval, and each system against a baseline.

For every system x metric cell: the mean over scored values with a 95% **BCa bootstrap interval**
(:func:`ragassay.analysis.bootstrap.bootstrap_mean_ci`; Efron & Tibshirani 1993, section 14.3; 1,000 resamples,
NaN = unscored).

For every metric and every system against the baseline, on the n samples both scored, with d_i = s_i - b_i, one
paired procedure (:mod:`ragassay.analysis.paired`): the two-sided sign-flip permutation test of "no difference"
and the interval that inverts the same test, so a verdict and its interval never disagree.

* **The decision family** is declared: ``[evaluation] decide`` (default: every metric and judge of the run that
  is not constant across every system). Its comparisons (systems other than the baseline x family metrics) go
  through Tarone's reduction, then Holm; each gets its interval at its Holm level. "better" or "worse" (by the
  metric's direction) exactly when that interval excludes 0; "no detectable difference" when it holds 0;
  "too few differing samples to decide" when Tarone's reduction left it out (its smallest attainable p-value
  cannot reach the level); "not comparable" with fewer than 2 paired samples.
* Columns outside the family are **described** with the same procedure at the nominal level (no verdict).
* **effect size** Cohen's d_z = mean(d) / sd(d) (Cohen 1988, section 2.3, Case 4), and the **MDE**, the smallest
  true difference a paired t test detects with power 0.8 at the comparison's level
  (:mod:`ragassay.analysis.power`); both undefined (None) when the differences do not vary beyond rounding.

**Turns of conversations** (samples whose :attr:`ragassay.models.Sample.cluster` is shared): every interval and
test resamples or flips whole conversations (:mod:`.clustered`, :mod:`.paired` "Clusters"): the cells get
cluster-bootstrap BCa intervals of the turn-weighted mean, the pairs the cluster sign-flip test and its interval,
and the MDE counts conversations with their per-conversation spread; ``n_clusters`` says how many conversations
hold the n turns. With every sample its own cluster, every number is the independent-samples one.

Every random draw comes from ``seed``: the same values and seed give the same numbers in any process.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ConfigError
from .clustered import UNIT
from .paired import FLIPS, PairInput, PairOutcome, decide_family, describe, no_variation

RESAMPLES = 1_000  # bootstrap resamples of the cell intervals
CONFIDENCE = 0.95
POWER = 0.8
METHOD = (
    f"BCa bootstrap {CONFIDENCE:.0%} intervals of the means ({RESAMPLES:,} resamples); paired differences: "
    f"two-sided sign-flip permutation test (exact up to 12 pairs, else {FLIPS:,} flips) and the interval that "
    "inverts it, Tarone's reduction and Holm over the declared decision family, each interval at its Holm level"
)
METHOD_CLUSTERED = (
    f"turns of conversations, resampled and flipped whole: cluster-bootstrap BCa {CONFIDENCE:.0%} intervals of the "
    f"turn-weighted means ({RESAMPLES:,} resamples of conversations); paired differences: two-sided cluster "
    f"sign-flip permutation test (whole conversations flipped; exact up to 12 conversations, else {FLIPS:,} flips) "
    "and the interval that inverts it, Tarone's reduction and Holm over the declared decision family"
)
BETTER, WORSE, NO_DIFFERENCE = "better", "worse", "no detectable difference"
TOO_FEW, NOT_COMPARABLE, UNDECIDED = "too few differing samples", "not comparable", "not in the decision family"
DECIDED = (BETTER, WORSE)
CONSTANT = "equal on every system and sample"  # why a metric is left out of the default decision family


@dataclasses.dataclass(frozen=True)
class CellStats:
    """One system x metric: mean over scored values, its bootstrap interval, scored and unscored counts."""

    system: str
    metric: str
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    unscored: int
    direction: str  # "higher" | "lower": which is better
    n_clusters: int | None = None  # conversations holding the n values (None: independent samples)


@dataclasses.dataclass(frozen=True)
class PairVerdict:
    """One metric, one system against the baseline, on the samples both scored (module docstring).

    ``ci_low``/``ci_high`` is the interval of the mean difference at ``level`` (the comparison's Holm level, or the
    nominal alpha outside the family); None for a side the samples cannot bound.
    """

    metric: str
    baseline: str
    system: str
    n: int
    mean_diff: float | None  # system - baseline
    ci_low: float | None
    ci_high: float | None
    p_value: float | None  # two-sided sign-flip permutation test of no difference
    p_holm: float | None  # Holm-adjusted over the family (None outside it)
    effect_size: float | None  # Cohen's d_z = mean_diff / sd(differences)
    mde: float | None  # smallest detectable difference at ``level``, power 0.8
    verdict: str  # better | worse | no detectable difference | too few differing samples | not comparable | ...
    reason: str  # why there is no verdict, or ""
    level: float | None = None  # the level the interval (and the verdict) is at
    n_discordant: int = 0  # samples on which the two systems differ
    wins: int = 0  # samples where the system scores better than the baseline (by the metric's direction)
    ties: int = 0
    losses: int = 0
    n_clusters: int = 0  # conversations holding the n paired samples (n for independent samples)
    unit_sd: float | None = None  # per-conversation spread behind the MDE (:mod:`.clustered`; sd when independent)

    @property
    def decided(self) -> bool:
        """better or worse."""
        return self.verdict in DECIDED


@dataclasses.dataclass(frozen=True)
class Verdicts:
    """Cells and pair verdicts of one run, with the settings that produced them."""

    run_id: str
    baseline: str
    alpha: float
    seed: int
    method: str
    cells: list[CellStats]
    pairs: list[PairVerdict]
    family: list[str] = dataclasses.field(default_factory=list)  # the metrics that decide
    constant: list[str] = dataclasses.field(default_factory=list)  # metrics equal on every system and sample
    #: for a run that is not complete, what the verdicts stand on (:func:`ragassay.analysis.partial.partial_note`)
    partial: str | None = None
    #: how many conversations the samples form when turns are clustered (None: independent samples)
    conversations: int | None = None

    @property
    def compared(self) -> int:
        """Comparisons tested in the family (after Tarone's reduction)."""
        return sum(1 for p in self.pairs if p.p_holm is not None)


def decide(run, *, baseline: str | None = None, alpha: float = 0.05, seed: int = 0, family=None) -> Verdicts:
    """The verdicts of a run (:class:`ragassay.results.RunData`): its systems in run order, its metric and judge
    columns, directions from the stored metric specs, the family from ``family`` or the run's stored
    ``[evaluation] decide`` (default: every column not constant across every system); ``partial`` says what a
    run that is not complete has scored. A family naming ``latency_s`` or ``tokens`` adds that output column
    (:mod:`.tokens`; lower is better), decided like a metric."""
    from .partial import partial_note
    from .tokens import OUTPUT_COLUMNS, output_columns

    declared = family if family is not None else stored_family(run.info.config)
    extra = [c for c in output_columns(declared) if c not in run.columns]  # a metric of the same name wins
    columns = run.columns + extra
    arrays = {(s, c): run.values(s, c) for s in run.systems for c in run.columns}
    arrays.update({(s, c): OUTPUT_COLUMNS[c](run, s) for s in run.systems for c in extra})
    directions = {c: run.direction(c) for c in run.columns} | dict.fromkeys(extra, "lower")
    verdicts = decide_columns(
        arrays,
        run.systems,
        columns,
        directions,
        run_id=run.id,
        baseline=baseline,
        alpha=alpha,
        seed=seed,
        unscored=run.unscored | _unscored_outputs(run, extra, arrays),
        family=declared,
        clusters=run.clusters,
    )
    return dataclasses.replace(verdicts, partial=partial_note(run))


def _unscored_outputs(run, columns: list[str], arrays) -> dict[tuple[str, str], int]:
    """Per (system, output column): the stored outputs without a value (failed, or no latency reported)."""
    produced = {s: np.array([run.output(s, q) is not None for q in run.question_ids], dtype=bool) for s in run.systems}
    return {(s, c): int(np.count_nonzero(np.isnan(arrays[(s, c)]) & produced[s])) for s in run.systems for c in columns}


def stored_family(config: Mapping) -> list[str] | None:
    """``[evaluation] decide`` of a stored config, or None (the default family)."""
    return ((config or {}).get("evaluation") or {}).get("decide")


def constant_columns(run) -> list[str]:
    """The columns of ``run`` equal on every system and sample (left out of the default decision family)."""
    return [c for c in run.columns if _constant([run.values(s, c) for s in run.systems])]


def decide_values(
    values: Mapping[tuple[str, str], Mapping[str, float]],
    systems: Sequence[str],
    metrics: Sequence[str],
    directions: Mapping[str, str],
    *,
    run_id: str = "",
    baseline: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    unscored: Mapping[tuple[str, str], int] | None = None,
    family: Sequence[str] | None = None,
    order: Sequence[str] | None = None,
    clusters: Mapping[str, str] | None = None,
) -> Verdicts:
    """Verdicts from per-sample ``values``: (system, metric) -> {sample id: value} (scored values only).

    ``directions`` gives "higher" or "lower" per metric (missing: higher); ``unscored`` the unscored count per
    (system, metric); ``family`` the metrics that decide (None: every metric not constant across every system);
    ``order`` the sample order (default: sorted ids); ``clusters`` each sample id's cluster (its conversation;
    default: each sample its own). The baseline is the first system unless named.
    """
    ids = list(order) if order is not None else sorted({q for key in values for q in values[key]})
    index = {q: i for i, q in enumerate(ids)}
    columns = {key: _column(values, key, index) for key in [(s, m) for s in systems for m in metrics]}
    return decide_columns(
        columns,
        systems,
        metrics,
        directions,
        run_id=run_id,
        baseline=baseline,
        alpha=alpha,
        seed=seed,
        unscored=unscored,
        family=family,
        clusters=None if clusters is None else [clusters.get(q, q) for q in ids],
    )


def decide_columns(
    columns: Mapping[tuple[str, str], np.ndarray],
    systems: Sequence[str],
    metrics: Sequence[str],
    directions: Mapping[str, str],
    *,
    run_id: str = "",
    baseline: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    unscored: Mapping[tuple[str, str], int] | None = None,
    family: Sequence[str] | None = None,
    clusters: Sequence[str] | None = None,
) -> Verdicts:
    """:func:`decide_values` from per-sample arrays: (system, metric) -> values in one sample order, NaN where
    unscored (every (system, metric) of ``systems`` x ``metrics`` present); ``clusters`` each sample's cluster in
    that order (None: independent samples), resampled and flipped whole (:mod:`.clustered`)."""
    from .clustered import clusters_of

    baseline = _check(systems, baseline, alpha, seed)
    constant = [m for m in metrics if _constant([columns[(s, m)] for s in systems])]
    chosen = _family(metrics, family, constant)
    units = None if clusters is None else clusters_of(clusters)
    if units is not None and units.singletons:
        units, clusters = None, None
    cells = _cells(columns, systems, metrics, directions, unscored or {}, seed, units)
    pairs = _pairs(columns, systems, metrics, baseline, directions, (chosen, constant), alpha, seed, clusters)
    method, conversations = (METHOD, None) if units is None else (METHOD_CLUSTERED, units.count)
    return Verdicts(run_id, baseline, alpha, seed, method, cells, pairs, chosen, constant, conversations=conversations)


def _check(systems: Sequence[str], baseline: str | None, alpha: float, seed: int) -> str:
    if not systems:
        raise ConfigError("there is no system to compare")
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha {alpha} is outside (0, 1); give e.g. --alpha 0.05")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"--seed must be a non-negative integer, got {seed!r}")
    baseline = systems[0] if baseline is None else baseline
    if baseline not in systems:
        raise ConfigError(f"--baseline '{baseline}' is not a system of the run. Its systems: {', '.join(systems)}")
    return baseline


def _family(metrics: Sequence[str], declared: Sequence[str] | None, constant: list[str]) -> list[str]:
    if declared is None:
        return [m for m in metrics if m not in constant]
    unknown = [m for m in declared if m not in metrics]
    if unknown:
        raise ConfigError(
            f"[evaluation] decide names {', '.join(unknown)}, which the run did not score. Its metrics and "
            f"judges: {', '.join(metrics)} (also latency_s and tokens: each output's seconds and tokens)"
        )
    return list(dict.fromkeys(declared))


def _column(values, key, index: dict[str, int]) -> np.ndarray:
    column = np.full(len(index), np.nan)
    for q, value in values.get(key, {}).items():
        if q in index:
            column[index[q]] = value
    return column


def _constant(columns: list[np.ndarray]) -> bool:
    """Whether every scored value of every system is the same (within rounding): the metric cannot decide."""
    scored = np.concatenate([c[~np.isnan(c)] for c in columns]) if columns else np.empty(0)
    return len(scored) > 0 and no_variation(scored)


def _cells(columns, systems, metrics, directions, unscored, seed: int, units=None) -> list[CellStats]:
    from .bootstrap import MeanInterval, bootstrap_mean_ci
    from .clustered import cluster_mean_ci

    keys = [(s, m) for s in systems for m in metrics]
    if not keys:
        return []
    matrix = np.column_stack([columns[k] for k in keys])
    if matrix.shape[0] == 0:
        intervals = [MeanInterval(None, None, None, 0, 0, "no scored instance")] * len(keys)
    elif units is None:
        intervals = bootstrap_mean_ci(matrix, n_resamples=RESAMPLES, confidence_level=CONFIDENCE, seed=seed)
    else:
        intervals = cluster_mean_ci(matrix, units, n_resamples=RESAMPLES, confidence_level=CONFIDENCE, seed=seed)
    held = [None if units is None else units.among(~np.isnan(matrix[:, j])) for j in range(len(keys))]
    return [
        CellStats(
            s,
            m,
            iv.mean,
            iv.ci_low,
            iv.ci_high,
            iv.n_scored,
            int(unscored.get((s, m), 0)),
            directions.get(m, "higher"),
            clusters,
        )
        for (s, m), iv, clusters in zip(keys, intervals, held)
    ]


def _pairs(columns, systems, metrics, baseline, directions, chosen, alpha, seed, clusters) -> list[PairVerdict]:
    family, constant = chosen
    keys = [(s, m) for m in metrics for s in systems if s != baseline]
    inputs = {k: PairInput(k, columns[k] - columns[(baseline, k[1])], clusters=clusters) for k in keys}
    outcomes = dict(zip(_in(keys, family), decide_family([inputs[k] for k in _in(keys, family)], alpha, seed)))
    outside = [k for k in keys if k[1] not in family]
    outcomes.update(zip(outside, describe([inputs[k] for k in outside], alpha, seed)))
    return [_verdict(outcomes[k], inputs[k], baseline, directions.get(k[1], "higher"), k[1] in constant) for k in keys]


def _in(keys, family) -> list:
    return [k for k in keys if k[1] in family]


def _verdict(o: PairOutcome, item: PairInput, baseline: str, direction: str, constant: bool) -> PairVerdict:
    system, metric = o.key
    d = item.differences[~np.isnan(item.differences)]
    sign = 1 if direction != "lower" else -1
    wins, losses = int(np.count_nonzero(sign * d > 0)), int(np.count_nonzero(sign * d < 0))
    if o.p_value is None and o.n_clusters < o.n and o.n >= 2:
        verdict, reason = NOT_COMPARABLE, f"fewer than 2 {UNIT}s scored by both {system} and {baseline} ({o.reason})"
    elif o.p_value is None:
        verdict, reason = NOT_COMPARABLE, f"fewer than 2 samples scored by both {system} and {baseline} ({o.n})"
    elif o.rejected:
        verdict, reason = (BETTER if sign * o.mean > 0 else WORSE), ""
    elif o.in_family:
        verdict, reason = NO_DIFFERENCE, ""
    elif o.reason:
        verdict, reason = TOO_FEW, _too_few_reason(o)
    elif constant:
        verdict, reason = UNDECIDED, f"{CONSTANT}: nothing to decide, so left out of the decision family"
    else:
        verdict, reason = UNDECIDED, "not in [evaluation] decide (or --decide): described, not decided"
    return PairVerdict(
        metric=metric,
        baseline=baseline,
        system=system,
        n=o.n,
        mean_diff=o.mean,
        ci_low=o.ci_low,
        ci_high=o.ci_high,
        p_value=o.p_value,
        p_holm=o.p_holm,
        effect_size=None if o.sd is None or o.mean is None else o.mean / o.sd,
        mde=_mde(o.unit_sd, o.n_clusters, o.level),
        verdict=verdict,
        reason=reason,
        level=o.level,
        n_discordant=o.n_discordant,
        wins=wins,
        ties=len(d) - wins - losses,
        losses=losses,
        n_clusters=o.n_clusters,
        unit_sd=o.unit_sd,
    )


def _too_few_reason(o: PairOutcome) -> str:
    """Why Tarone's reduction left a pair out, without repeating the verdict's words."""
    if not o.n_discordant:
        return "equal on every sample: nothing to decide"
    if o.n_clusters < o.n:
        p_min = "" if o.p_min is None else f": the smallest attainable p-value, {o.p_min:.3g}, cannot reach the level"
        return f"differ in total on {o.clusters_discordant} of {o.n_clusters} {UNIT}s ({o.n} turns){p_min}"
    p_min = "" if o.p_min is None else f": the smallest attainable p-value, {o.p_min:.3g}, cannot reach the level"
    return f"differ on {o.n_discordant} of {o.n} samples{p_min}"


def _mde(sd: float | None, n: int, level: float | None) -> float | None:
    """The smallest difference detectable with power 0.8 at ``level`` (:func:`ragassay.analysis.power.mde`) by
    ``n`` independent units of spread ``sd`` (samples, or conversations with their per-conversation spread:
    :func:`ragassay.analysis.clustered.unit_spread`); None when the differences do not vary."""
    from .power import mde

    return mde(sd, n, level, POWER)[0] if sd is not None and n >= 2 and level is not None else None
