"""Per-group statistics of a stored run: every metric's mean and 95% interval within each group of samples.

A *breakdown* splits the samples of a run by one field (a declared sample field such as ``group_id``, a
``metadata.<key>`` path or a free attribute such as ``template``; a dotted path digs into a nested value) and,
for each (group, system, metric), gives n, the number scored, the mean and its bootstrap 95% interval
(:func:`ragassay.analysis.bootstrap.bootstrap_mean_ci`, Unitxt's BCa scheme, seeded), and the group's share of
the samples. Numeric fields may be cut into quantile bins (``pandas.qcut``). A group with fewer than 2 scored
values has no interval, and says so. When the samples are turns of conversations, each group's interval resamples
the conversations within it (:func:`ragassay.analysis.clustered.cluster_mean_ci`): a group by turn depth or
answerability holds turns of many conversations, and a conversation's turns in one group move together.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ConfigError
from .bootstrap import UNITXT_SEED, bootstrap_mean_ci

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

MISSING = "(missing)"


@dataclasses.dataclass(frozen=True)
class GroupStat:
    """One (group, system, metric) cell: n samples, how many scored, mean and 95% interval (or why none)."""

    group: str
    system: str
    metric: str
    n: int
    n_scored: int
    share: float  # the group's share of the run's samples
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    reason: str | None = None  # why there is no interval; None when there is one


@dataclasses.dataclass(frozen=True)
class Breakdown:
    """A run's statistics by the groups of one field: groups in order, one :class:`GroupStat` per cell."""

    by: str
    bins: int | None
    groups: list[str]
    sizes: dict[str, int]  # group -> samples
    rows: list[GroupStat]
    notes: list[str] = dataclasses.field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "bins": self.bins,
            "groups": [{"group": g, "samples": self.sizes[g]} for g in self.groups],
            "rows": [dataclasses.asdict(row) for row in self.rows],
            "notes": self.notes,
        }


def field_values(samples: pd.DataFrame, field: str) -> pd.Series:
    """The value of ``field`` for every sample (indexed by question_id); an unknown field is a ConfigError."""
    table = samples.reset_index()
    if field in table.columns:
        return table.set_index("question_id")[field]
    head, _, rest = field.partition(".")
    if head == "attributes" and rest in table.columns:
        return table.set_index("question_id")[rest]
    for column in sorted((c for c in table.columns if field.startswith(f"{c}.")), key=len, reverse=True):
        path = field[len(column) + 1 :].split(".")
        if table[column].map(lambda v: isinstance(v, dict)).any():
            return table.set_index("question_id")[column].map(lambda v, keys=path: _dig(v, keys))
    known = ", ".join(str(c) for c in table.columns)
    raise ConfigError(f"no sample field '{field}' in this run; --by accepts one of: {known}")


def _dig(value: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _label(value: Any) -> str:
    if _is_missing(value):
        return MISSING
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def group_labels(values: pd.Series, field: str, bins: int | None = None) -> tuple[pd.Series, list[str], list[str]]:
    """(label per sample, labels in order, notes): distinct values sorted, or ``bins`` quantile bins."""
    present = [v for v in values if not _is_missing(v)]
    numeric = bool(present) and all(_is_number(v) for v in present)
    notes: list[str] = []
    if bins is not None:
        if not numeric:
            example = next((v for v in present if not _is_number(v)), None)
            raise ConfigError(
                f"--bins needs a numeric field; '{field}' has values such as {example!r}. Leave out --bins."
            )
        labels, order, notes = _quantile_bins(values, bins)
    else:
        labels = values.map(_label)
        keys = {_label(v): v for v in present}
        order = sorted(keys, key=(lambda k: float(keys[k])) if numeric else str)
    if (labels == MISSING).any():
        order.append(MISSING)
    return labels, order, notes


def _quantile_bins(values: pd.Series, bins: int) -> tuple[pd.Series, list[str], list[str]]:
    import pandas as pd

    if bins < 1:
        raise ConfigError(f"--bins must be at least 1, got {bins}")
    numbers = pd.to_numeric(values.map(lambda v: None if _is_missing(v) else v), errors="coerce")
    cut = pd.qcut(numbers, bins, duplicates="drop")
    intervals = list(cut.cat.categories)
    names = {iv: f"[{iv.left:.4g}, {iv.right:.4g}]" for iv in intervals}
    labels = cut.map(lambda iv: MISSING if _is_missing(iv) else names[iv]).astype(object)
    notes = []
    if len(intervals) < bins:
        notes.append(f"asked for {bins} quantile bins; the values allow only {len(intervals)} distinct ones")
    return labels, [names[iv] for iv in intervals], notes


def breakdown(
    run,
    by: str,
    metrics: list[str] | None = None,
    bins: int | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = UNITXT_SEED,
) -> Breakdown:
    """Statistics of ``run`` (:class:`ragassay.results.RunData`) per group of ``by``, system and metric.

    ``metrics`` are columns of the run (metrics, ``judge:<label>``); default: all of them.
    """
    metrics = check_metrics(run.columns, metrics)
    labels, order, notes = group_labels(field_values(run.samples_frame(), by), by, bins)
    total = len(labels)
    sizes = {group: int((labels == group).sum()) for group in order}
    masks = {group: (labels == group).to_numpy() for group in order}
    rows = []
    clusters = np.asarray(run.clusters, dtype=object) if run.conversations else None
    for system in run.systems:
        table = np.column_stack([run.values(system, m) for m in metrics]) if metrics else np.empty((total, 0))
        for group in order:
            intervals = _intervals(
                table[masks[group]], None if clusters is None else clusters[masks[group]], n_resamples, seed
            )
            rows += [_stat(group, system, m, iv, sizes[group] / total) for m, iv in zip(metrics, intervals)]
    return Breakdown(by, bins, order, sizes, rows, notes)


def _intervals(table: np.ndarray, clusters: np.ndarray | None, n_resamples: int, seed: int) -> list:
    """Each column's mean and interval: resampling samples, or the conversations of ``clusters``."""
    from .clustered import cluster_mean_ci, clusters_of

    if clusters is None or not table.shape[1]:
        return bootstrap_mean_ci(table, n_resamples=n_resamples, seed=seed)
    return cluster_mean_ci(table, clusters_of(list(clusters)), n_resamples=n_resamples, seed=seed)


def check_metrics(available: list[str], wanted: list[str] | None) -> list[str]:
    """``wanted`` (default: every available column), each checked against what the run scored."""
    if not wanted:
        return available
    unknown = [m for m in wanted if m not in available]
    if unknown:
        raise ConfigError(
            f"metric {', '.join(map(repr, unknown))} is not in this run; it scored: {', '.join(available) or 'nothing'}"
        )
    return list(dict.fromkeys(wanted))


def _stat(group: str, system: str, metric: str, interval, share: float) -> GroupStat:
    reason = interval.reason
    if interval.n_scored < 2:
        reason = f"fewer than 2 scored values ({interval.n_scored})"
    low, high = (None, None) if reason else (interval.ci_low, interval.ci_high)
    return GroupStat(group, system, metric, interval.n, interval.n_scored, share, interval.mean, low, high, reason)
