"""Drift over time: per-window means of a run whose samples come from traces, and the windows that differ.

Each sample scored from a trace carries ``metadata["trace"]["start_ns"]`` (the trace's start, Unix nanoseconds;
docs/traces.md). :func:`trend` buckets the samples by the UTC day (``2025-03-04``) or ISO week (``2025-W10``,
Monday to Sunday) of that start and gives, per system x metric x window:

* the **mean** over the window's scored values with its 95% **BCa bootstrap interval**, the same cells as
  ``compare`` (:func:`ragassay.analysis.bootstrap.bootstrap_mean_ci`; Efron & Tibshirani 1993, section 14.3;
  1,000 resamples, NaN = unscored);
* the **difference** mean(window) - mean(reference window) with its BCa bootstrap interval for two independent
  groups (:func:`ragassay.analysis.bootstrap.difference_ci`: a window and the reference hold different traces,
  so the design is unpaired), at level ``1 - alpha / m`` where m is the number of windows compared with the
  reference for that system and metric (Bonferroni, Dunn 1961, *Multiple comparisons among means*, JASA 56):
  the chance that any window of a system x metric is flagged while nothing changed is at most ``alpha``;
* the **flag**: ``higher`` or ``lower`` when that interval excludes 0, else empty; ``change`` reads it as
  ``better`` or ``worse`` by the metric's direction.

The reference window is the first window with data unless named. A window with fewer than 2 scored values, or
no variation in either group, has no interval and no flag (``reason`` says why). Samples without a trace start
are counted in :attr:`Trend.untimed`, never dropped silently. Every random draw comes from ``seed``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

import numpy as np

from ..errors import ConfigError

RESAMPLES = 1_000
CONFIDENCE = 0.95
BY = ("day", "week")
DAY_NS = 86_400 * 1_000_000_000
HIGHER, LOWER = "higher", "lower"
METHOD = (
    f"per window: mean with its BCa bootstrap {CONFIDENCE:.0%} interval ({RESAMPLES:,} resamples); against the "
    "reference window: BCa bootstrap interval of the difference of two independent groups at level 1 - alpha/m "
    "(Bonferroni over the m windows compared per system and metric); flagged when it excludes 0"
)


@dataclasses.dataclass(frozen=True)
class TrendWindow:
    """One system x metric x window: its mean and interval, and how it compares with the reference window."""

    system: str
    metric: str
    window: str  # 2025-03-04 (day) or 2025-W10 (ISO week), UTC
    start_ns: int  # the window's first instant, Unix nanoseconds (UTC)
    n: int  # scored values in the window
    unscored: int  # samples of the window without a value (unscored, failed or missing output)
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    reference: bool  # this is the reference window
    difference: float | None = None  # mean - mean of the reference window
    diff_low: float | None = None
    diff_high: float | None = None
    flag: str = ""  # "higher" | "lower" than the reference (the interval excludes 0) | ""
    change: str = ""  # "better" | "worse" by the metric's direction, when flagged
    reason: str = ""  # why there is no mean, interval or comparison


@dataclasses.dataclass(frozen=True)
class Trend:
    """Every window of every system and metric of one run, in (system, metric, time) order."""

    run_id: str
    by: str
    reference: str
    systems: list[str]
    metrics: list[str]
    windows: list[TrendWindow]
    alpha: float
    level: dict[str, float]  # "system/metric" -> the confidence level of its comparisons (Bonferroni)
    seed: int
    samples: int  # samples with a trace start
    untimed: int  # samples without one (not in any window)
    method: str = METHOD

    @property
    def flagged(self) -> list[TrendWindow]:
        """The windows that differ from the reference window."""
        return [w for w in self.windows if w.flag]

    def series(self, system: str, metric: str) -> list[TrendWindow]:
        """The windows of one system and metric, in time order."""
        return [w for w in self.windows if w.system == system and w.metric == metric]


def window_of(start_ns: int, by: str) -> tuple[str, int]:
    """(label, first instant in ns) of the UTC day or ISO week that holds ``start_ns`` (integer arithmetic: a
    trace one nanosecond before midnight stays in its day)."""
    days = start_ns // DAY_NS
    day = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(days=days)
    if by == "day":
        return day.strftime("%Y-%m-%d"), days * DAY_NS
    year, week, weekday = day.isocalendar()
    return f"{year}-W{week:02d}", (days - (weekday - 1)) * DAY_NS


def trace_starts(run) -> list[int | None]:
    """Each sample's trace start (``metadata["trace"]["start_ns"]``), None where it has none. Read from the stored
    sample JSON; a sample whose JSON has no ``"trace"`` key anywhere is not parsed at all."""
    import json

    starts = []
    for raw in run.sample_json:
        metadata = (json.loads(raw).get("metadata") or {}) if '"trace"' in raw else {}
        start = (metadata.get("trace") or {}).get("start_ns") if isinstance(metadata, dict) else None
        starts.append(int(start) if isinstance(start, (int, float, str)) and str(start).lstrip("-").isdigit() else None)
    return starts


def trend(
    run,
    *,
    by: str = "day",
    metrics: Sequence[str] | None = None,
    reference: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
) -> Trend:
    """The per-window means of ``run`` (:class:`ragassay.results.RunData`) and the windows that differ from the
    ``reference`` window (default: the first), by UTC ``day`` or ISO ``week`` (module docstring).

    :raises ragassay.errors.ConfigError: no sample has a trace start, an unknown metric, window or ``by``.
    """
    if by not in BY:
        raise ConfigError(f"--by {by!r}: use day or week")
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha {alpha} is outside (0, 1); give e.g. --alpha 0.05")
    starts = trace_starts(run)
    timed = [i for i, s in enumerate(starts) if s is not None]
    if not timed:
        raise ConfigError(
            f"run {run.id[:12]}: no sample carries a trace start (metadata.trace.start_ns); trend needs a run "
            "scored from traces (dataset source 'traces', docs/traces.md)"
        )
    chosen = _metrics(run, metrics)
    labels = {i: window_of(starts[i], by) for i in timed}
    order = sorted(set(labels.values()), key=lambda item: item[1])
    reference = _reference(order, reference, by)
    members = {label: np.array([i for i in timed if labels[i][0] == label]) for label, _ in order}
    windows, levels = [], {}
    for system in run.systems:
        for metric in chosen:
            values = run.values(system, metric)
            compared = sum(1 for label, _ in order if label != reference and _scored(values[members[label]]).size)
            level = 1 - alpha / max(compared, 1)
            levels[f"{system}/{metric}"] = level
            windows += _series(run, system, metric, values, order, members, reference, level, seed)
    untimed = len(starts) - len(timed)
    return Trend(run.id, by, reference, list(run.systems), chosen, windows, alpha, levels, seed, len(timed), untimed)


def _metrics(run, metrics: Sequence[str] | None) -> list[str]:
    if not metrics:
        if not run.columns:
            raise ConfigError(f"run {run.id[:12]} has no metric or judge scores: nothing to trend")
        return list(run.columns)
    unknown = [m for m in metrics if m not in run.columns]
    if unknown:
        raise ConfigError(
            f"--metric {', '.join(unknown)}: the run did not score it. Its metrics and judges: {', '.join(run.columns)}"
        )
    return list(dict.fromkeys(metrics))


def _reference(order: list[tuple[str, int]], reference: str | None, by: str) -> str:
    labels = [label for label, _ in order]
    if reference is None:
        return labels[0]
    if reference not in labels:
        shape = "YYYY-MM-DD" if by == "day" else "YYYY-Www"
        raise ConfigError(
            f"--reference {reference}: no trace falls in that {by} ({shape}, UTC). The run's windows: "
            + ", ".join(labels)
        )
    return reference


def _scored(values: np.ndarray) -> np.ndarray:
    return values[~np.isnan(values)]


def _series(run, system, metric, values, order, members, reference, level, seed) -> list[TrendWindow]:
    """The windows of one system x metric: cells in one bootstrap call, then each compared with the reference."""
    from .bootstrap import bootstrap_mean_ci, difference_ci

    base = _scored(values[members[reference]])
    higher_is_better = run.direction(metric) != "lower"
    result = []
    for label, start in order:
        window = values[members[label]]
        scored = _scored(window)
        cell = bootstrap_mean_ci(window, n_resamples=RESAMPLES, confidence_level=CONFIDENCE, seed=seed)
        item = TrendWindow(
            system=system,
            metric=metric,
            window=label,
            start_ns=start,
            n=int(scored.size),
            unscored=int(window.size - scored.size),
            mean=cell.mean,
            ci_low=cell.ci_low,
            ci_high=cell.ci_high,
            reference=label == reference,
            reason=cell.reason or "",
        )
        if label != reference and scored.size and base.size:
            diff = difference_ci(scored, base, n_resamples=RESAMPLES, confidence_level=level, seed=seed)
            flag = ""
            if diff.ci_low is not None and (diff.ci_low > 0 or diff.ci_high < 0):
                flag = HIGHER if diff.ci_low > 0 else LOWER
            change = "" if not flag else "better" if (flag == HIGHER) == higher_is_better else "worse"
            item = dataclasses.replace(
                item,
                difference=diff.difference,
                diff_low=diff.ci_low,
                diff_high=diff.ci_high,
                flag=flag,
                change=change,
                reason=diff.reason or item.reason,
            )
        elif label != reference and not base.size:
            item = dataclasses.replace(item, reason="the reference window has no scored value")
        result.append(item)
    return result
