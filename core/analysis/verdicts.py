"""Verdicts of a comparison: each cell's mean with a confidence interval, and each system against a baseline.

For every system x metric cell: the mean over scored values with a 95% **BCa bootstrap interval**
(:func:`ragassay.analysis.bootstrap.bootstrap_mean_ci`, Efron & Tibshirani 1993, An Introduction to the
Bootstrap, section 14.3; 1,000 resamples, NaN = unscored). BCa rather than percentile: it corrects the bias and
skew of the bootstrap distribution, which matter for bounded scores near 0 or 1.

For every metric and every system against the baseline, on the n samples both scored, with d_i = s_i - b_i:

* **mean difference** mean(d) and its 95% paired bootstrap interval (BCa over the differences, Efron &
  Tibshirani 1993, section 14.3; resampling samples keeps the pairs together);
* **p-value** of the two-sided sign-flip permutation test of mean(d) = 0 (Good 2005, Permutation, Parametric
  and Bootstrap Tests of Hypotheses, 3rd ed., section 3.1.1, the one-sample / paired test; Efron & Tibshirani
  1993, section 15.2). Under the null each d_i is as likely to be -d_i, so T* = mean(e_i d_i) over random
  signs e_i = +-1 gives the null distribution. For n <= :data:`EXACT_MAX` all 2^n sign vectors are enumerated
  and p = #{|T*| >= |T|} / 2^n (as ``scipy.stats.permutation_test``); otherwise B = :data:`FLIPS` random sign
  vectors from a seeded generator give p = (1 + #{|T*| >= |T|}) / (B + 1), which is never 0 (Phipson & Smyth
  2010, Permutation P-values Should Never Be Zero);
* **Holm-adjusted p** over all comparable (system, metric) pairs of the table (Holm 1979, A Simple Sequentially
  Rejective Multiple Test Procedure, Scand. J. Statist. 6): with the m p-values sorted p_(1) <= ... <= p_(m),
  p_holm_(i) = max_{j <= i} min(1, (m - j + 1) p_(j));
* **effect size** Cohen's d_z = mean(d) / sd(d) (Cohen 1988, section 2.3, Case 4), sd with n - 1;
* **MDE**: the smallest true difference the paired t test detects with power 0.8 at level alpha with these n
  pairs and this sd(d) (:mod:`ragassay.analysis.power`);
* **verdict**: "better" or "worse" (by the metric's direction) when p_holm < alpha, else
  "no detectable difference"; "not comparable" (with the reason) when fewer than 2 samples were scored by both.

Every random draw comes from ``seed``: the same values and seed give the same numbers in any process.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ConfigError

EXACT_MAX = 12  # enumerate all 2^n sign vectors up to this many pairs
FLIPS = 10_000  # random sign vectors above EXACT_MAX
RESAMPLES = 1_000  # bootstrap resamples of the intervals
CONFIDENCE = 0.95
POWER = 0.8
BATCH_ELEMENTS = 1 << 22  # signs drawn per batch
METHOD = (
    f"BCa bootstrap {CONFIDENCE:.0%} intervals ({RESAMPLES:,} resamples); two-sided sign-flip permutation test "
    f"(exact up to {EXACT_MAX} pairs, else {FLIPS:,} flips); Holm adjustment over all pairs x metrics"
)
BETTER, WORSE, NO_DIFFERENCE, NOT_COMPARABLE = "better", "worse", "no detectable difference", "not comparable"


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


@dataclasses.dataclass(frozen=True)
class PairVerdict:
    """One metric, one system against the baseline, on the samples both scored (module docstring)."""

    metric: str
    baseline: str
    system: str
    n: int
    mean_diff: float | None  # system - baseline
    ci_low: float | None  # bootstrap interval of the mean paired difference
    ci_high: float | None
    p_value: float | None  # two-sided sign-flip permutation test
    p_holm: float | None  # Holm-adjusted over all pairs x metrics
    effect_size: float | None  # Cohen's d_z = mean_diff / sd(differences)
    mde: float | None  # smallest detectable difference at alpha, power 0.8
    verdict: str  # "better" | "worse" | "no detectable difference" | "not comparable"
    reason: str  # why "not comparable", or ""


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


def decide(
    store,
    run_id: str,
    *,
    baseline: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    metrics: list[str] | None = None,
) -> Verdicts:
    """The verdicts of stored run ``run_id``: its systems in run order, its metric and judge columns
    (``judge:<label>``) unless ``metrics`` names some, directions from the stored metric specs."""
    from .comparison import per_sample_values, summarize_runs

    run_id = store.get_run(run_id)["id"]
    comparison = summarize_runs(store, [run_id])
    columns = comparison.columns if metrics is None else list(metrics)
    unknown = [m for m in columns if m not in comparison.columns]
    if unknown:
        raise ConfigError(
            f"run {run_id[:12]} has no metric {', '.join(unknown)}. Its metrics: {', '.join(comparison.columns)}"
        )
    systems = [row.system for row in comparison.rows]
    unscored = {(row.system, c): row.cells[c].unscored for row in comparison.rows for c in columns}
    directions = {c: comparison.direction(c) for c in columns}
    values = per_sample_values(store, run_id)
    return decide_values(
        values,
        systems,
        columns,
        directions,
        run_id=run_id,
        baseline=baseline,
        alpha=alpha,
        seed=seed,
        unscored=unscored,
    )


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
) -> Verdicts:
    """Verdicts from per-sample ``values``: (system, metric) -> {sample id: value} (scored values only).

    ``directions`` gives "higher" or "lower" per metric (missing: higher); ``unscored`` the unscored count per
    (system, metric) (missing: 0). The baseline is the first system unless named.
    """
    baseline = _check(systems, baseline, alpha, seed)
    ids = sorted({q for key in values for q in values[key]})
    index = {q: i for i, q in enumerate(ids)}
    cell_keys = [(s, m) for s in systems for m in metrics]
    pair_keys = [(s, m) for m in metrics for s in systems if s != baseline]
    cells = _matrix(values, cell_keys, index)
    diffs = (
        np.column_stack([_column(values, (s, m), index) - _column(values, (baseline, m), index) for s, m in pair_keys])
        if pair_keys
        else np.empty((len(ids), 0))
    )
    intervals = _intervals(np.hstack([cells, diffs]), seed)
    unscored = unscored or {}
    cell_stats = [
        CellStats(
            s, m, iv.mean, iv.ci_low, iv.ci_high, iv.n_scored, int(unscored.get((s, m), 0)), directions.get(m, "higher")
        )
        for (s, m), iv in zip(cell_keys, intervals[: len(cell_keys)])
    ]
    p_values = sign_flip_p_values(diffs, seed)
    pairs = _pairs(pair_keys, baseline, diffs, intervals[len(cell_keys) :], p_values, directions, alpha)
    return Verdicts(run_id, baseline, alpha, seed, METHOD, cell_stats, pairs)


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


def _column(values, key, index: dict[str, int]) -> np.ndarray:
    column = np.full(len(index), np.nan)
    for q, value in values.get(key, {}).items():
        column[index[q]] = value
    return column


def _matrix(values, keys, index: dict[str, int]) -> np.ndarray:
    return np.column_stack([_column(values, key, index) for key in keys]) if keys else np.empty((len(index), 0))


def _intervals(columns: np.ndarray, seed: int) -> list:
    """Mean and BCa interval of each column (NaN = unscored), all from the same resamples."""
    from .bootstrap import MeanInterval, bootstrap_mean_ci

    if columns.shape[1] == 0:
        return []
    if columns.shape[0] == 0:
        return [MeanInterval(None, None, None, 0, 0, "no scored instance")] * columns.shape[1]
    return bootstrap_mean_ci(columns, n_resamples=RESAMPLES, confidence_level=CONFIDENCE, seed=seed, method="BCa")


def sign_flip_p_values(diffs: np.ndarray, seed: int = 0, flips: int = FLIPS) -> list[float | None]:
    """Two-sided sign-flip permutation p-value of mean = 0 for each column of ``diffs`` (NaN = no pair there).

    Exact (all 2^n sign vectors) for a column with n <= :data:`EXACT_MAX` pairs, else ``flips`` random sign
    vectors shared by every column (one seeded stream, drawn in row batches; a matrix product per batch). None
    for a column with fewer than 2 pairs.
    """
    paired = ~np.isnan(diffs)
    counts = paired.sum(axis=0)
    p_values: list[float | None] = [None] * diffs.shape[1]
    sampled = []
    for j in range(diffs.shape[1]):
        if counts[j] >= 2 and counts[j] <= EXACT_MAX:
            p_values[j] = _exact_p(diffs[paired[:, j], j])
        elif counts[j] > EXACT_MAX:
            sampled.append(j)
    if sampled:
        for j, p in zip(sampled, _sampled_p(np.where(paired[:, sampled], diffs[:, sampled], 0.0), seed, flips)):
            p_values[j] = p
    return p_values


def _tolerance(sums: np.ndarray, scale: np.ndarray, n: int) -> np.ndarray:
    """How far two ways of summing n values may differ (as scipy, ties within rounding count as ties)."""
    eps = np.finfo(np.float64).eps
    return np.maximum(100 * eps * np.abs(sums), 4 * (n + 2) * eps * scale)


def _exact_p(d: np.ndarray) -> float:
    n = len(d)
    signs = 1.0 - 2.0 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
    null = np.abs(signs @ d)
    observed = abs(float(d.sum()))
    tolerance = _tolerance(np.array(observed), np.abs(d).max(initial=0.0), n)
    return float(np.count_nonzero(null >= observed - tolerance) / 2**n)


def _sampled_p(d: np.ndarray, seed: int, flips: int) -> list[float]:
    """Monte Carlo p-values of the columns of ``d`` (zeros where a column has no pair: a flip leaves them 0)."""
    n = d.shape[0]
    observed = np.abs(d.sum(axis=0))
    tolerance = _tolerance(observed, np.abs(d).max(axis=0, initial=0.0), n)
    rng = np.random.default_rng(seed)
    extreme = np.zeros(d.shape[1], dtype=np.int64)
    rows = max(1, BATCH_ELEMENTS // max(n, 1))
    for start in range(0, flips, rows):
        bits = rng.integers(0, 2, (min(rows, flips - start), n), dtype=np.int8)
        null = np.abs((1.0 - 2.0 * bits) @ d)
        extreme += np.count_nonzero(null >= observed - tolerance, axis=0)
    return [float((1 + k) / (flips + 1)) for k in extreme]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (ties keep their order)."""
    m = len(p_values)
    order = np.argsort(np.asarray(p_values, dtype=np.float64), kind="stable")
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _pairs(pair_keys, baseline, diffs, intervals, p_values, directions, alpha) -> list[PairVerdict]:
    comparable = [j for j, p in enumerate(p_values) if p is not None]
    adjusted = dict(zip(comparable, holm([p_values[j] for j in comparable])))
    pairs = []
    for j, (system, metric) in enumerate(pair_keys):
        d = diffs[~np.isnan(diffs[:, j]), j]
        if j not in adjusted:
            reason = f"fewer than 2 samples scored by both {system} and {baseline} ({len(d)})"
            pairs.append(PairVerdict(metric, baseline, system, len(d), *[None] * 7, NOT_COMPARABLE, reason))
            continue
        mean, sd = float(d.mean()), float(d.std(ddof=1))
        interval = intervals[j]
        verdict = _verdict(mean, adjusted[j], alpha, directions.get(metric, "higher"))
        pairs.append(
            PairVerdict(
                metric,
                baseline,
                system,
                len(d),
                mean,
                interval.ci_low,
                interval.ci_high,
                p_values[j],
                adjusted[j],
                mean / sd if sd > 0 else None,
                _mde(sd, len(d), alpha),
                verdict,
                "",
            )
        )
    return pairs


def _verdict(mean: float, p_holm: float, alpha: float, direction: str) -> str:
    if p_holm >= alpha or mean == 0:
        return NO_DIFFERENCE
    return BETTER if (mean > 0) == (direction != "lower") else WORSE


def _mde(sd: float, n: int, alpha: float) -> float | None:
    """The smallest difference detectable with power 0.8 (:func:`ragassay.analysis.power.mde`); None when
    the differences do not vary."""
    from .power import mde

    return mde(sd, n, alpha, POWER)[0] if sd > 0 and n >= 2 else None


def verdict_sentences(verdicts: Verdicts) -> list[str]:
    """The verdicts in plain words, one line per finding: wins and losses first (smallest Holm p first), then
    no detectable difference, then what could not be compared."""
    decided = [p for p in verdicts.pairs if p.verdict in (BETTER, WORSE)]
    undecided = [p for p in verdicts.pairs if p.verdict == NO_DIFFERENCE]
    rest = [p for p in verdicts.pairs if p.verdict == NOT_COMPARABLE]
    decided.sort(key=lambda p: (p.p_holm, -abs(p.effect_size or math.inf)))
    undecided.sort(key=lambda p: p.p_holm)
    return [_sentence(p) for p in decided] + _grouped(undecided) + [_sentence(p) for p in rest]


def _grouped(undecided: list[PairVerdict]) -> list[str]:
    """One line per metric for the pairs without a detectable difference (the single-pair sentence when a
    metric has one such pair): the systems with their mean differences and the range of detectable differences."""
    by_metric: dict[str, list[PairVerdict]] = {}
    for pair in undecided:
        by_metric.setdefault(pair.metric, []).append(pair)
    lines = []
    for metric, pairs in by_metric.items():
        if len(pairs) == 1:
            lines.append(_sentence(pairs[0]))
            continue
        base, ns = f"{pairs[0].baseline} (baseline)", sorted({p.n for p in pairs})
        n_text = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]}-{ns[-1]}"
        if all(p.mde is None and p.mean_diff == 0 for p in pairs):
            systems = ", ".join(p.system for p in pairs)
            lines.append(f"No difference between {systems} and {base} on {metric}: equal on every sample ({n_text}).")
            continue
        systems = ", ".join(f"{p.system} ({p.mean_diff:+.3f})" for p in pairs)
        mdes = sorted(p.mde for p in pairs if p.mde is not None)
        low, high = (f"{mdes[0]:.2g}", f"{mdes[-1]:.2g}") if mdes else ("", "")
        span = low if low == high else f"{low}-{high}"
        limit = f"; differences below {span} cannot be detected with this many samples" if mdes else ""
        lines.append(f"No detectable difference on {metric} for {systems} against {base} ({n_text}{limit}).")
    return lines


def _sentence(pair: PairVerdict) -> str:
    base = f"{pair.baseline} (baseline)"
    if pair.verdict == NOT_COMPARABLE:
        return f"{pair.system} and {base} cannot be compared on {pair.metric}: {pair.reason}."
    if pair.verdict == NO_DIFFERENCE:
        if pair.mde is None and pair.mean_diff == 0:
            return f"No difference between {pair.system} and {base} on {pair.metric}: equal on all {pair.n} samples."
        if pair.mde is None:
            limit = "every sample differs by the same amount, so the MDE cannot be estimated"
        else:
            limit = f"differences below {pair.mde:.2g} cannot be detected with this many samples"
        return (
            f"No detectable difference between {pair.system} and {base} on {pair.metric} "
            f"(mean difference {pair.mean_diff:+.3f}, Holm p {_p(pair.p_holm)}; n = {pair.n}; {limit})."
        )
    verb = "beats" if pair.verdict == BETTER else "is worse than"
    interval = f"95% CI {pair.ci_low:+.3f} to {pair.ci_high:+.3f}" if pair.ci_low is not None else "no interval"
    return (
        f"{pair.system} {verb} {base} on {pair.metric} by {pair.mean_diff:+.3f} "
        f"({interval}, Holm p {_p(pair.p_holm)}; n = {pair.n})."
    )


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"
