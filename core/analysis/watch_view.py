"""What the live page of a watch shows, from its stored record (:class:`ragassay.results.watches.WatchRecord`) at a
moment ``now``: each watched metric's bins over time with the detector's confidence sequence and the reference
band (:mod:`ragassay.watch.history` keeps them), its detector now (restored from the stored state:
:meth:`ragassay.analysis.monitor.Detector.summary`), the alarms with their versions (first suspect first) and worst
traces, and the judge spend in the last hour and day against the budget with the traces unscored for budget.

The spend windows count every minute that overlaps them, as the watch's budget does
(:meth:`ragassay.watch.budget.RollingSpend.within`), so the page shows what the budget counts.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

BUCKET_S = 60.0  # the watch keeps its spend per minute
WINDOWS = (("last hour", 3600.0, "hour"), ("last 24 hours", 86_400.0, "day"))
SNAPSHOT = ("since_mean", "low", "high", "evidence", "reference", "n")  # ragassay.watch.history.SNAPSHOT


@dataclasses.dataclass(frozen=True)
class Bin:
    """One time bin of a metric: [start, end) in epoch seconds, the values observed in it (count, mean) and the
    detector after its last value (mean since the (re)start, confidence sequence [low, high], evidence, reference,
    observations n); a snapshot's parts are None where the watch kept none."""

    start: float
    end: float
    count: int
    mean: float | None
    since_mean: float | None
    low: float | None
    high: float | None
    evidence: float | None
    reference: float | None
    n: int | None


@dataclasses.dataclass(frozen=True)
class MetricTrack:
    """One watched column: its detector's settings and summary now (``summary`` None with ``problem`` when its
    stored state cannot be read, or before it has a reference), its bins, and its alarms."""

    column: str
    direction: str | None
    value_range: tuple[float, float] | None
    margin: float
    summary: dict[str, Any] | None
    bins: list[Bin]
    alarms: list[dict[str, Any]]
    problem: str | None = None


@dataclasses.dataclass(frozen=True)
class Spend:
    """Judge spend in one rolling window: model calls and US dollars, each with its limit (None: no limit)."""

    window: str
    calls: int
    usd: float
    calls_limit: int | None
    usd_limit: float | None


@dataclasses.dataclass(frozen=True)
class WatchView:
    """A watch as its page shows it (module docstring); ``counts`` per decision status of the whole watch run."""

    run_id: str
    name: str
    project: str
    now: float
    committed_at: float | None
    bin_width_s: int | None
    metrics: list[MetricTrack]
    alarms: list[dict[str, Any]]  # newest first, each with ``versions`` as [(key, [(value, traces), ...])]
    spend: list[Spend]
    limits: dict[str, Any]
    counts: dict[str, int]
    drift: list[dict[str, Any]]
    rules: dict[str, Any]
    problem: str | None = None

    @property
    def unscored_for_budget(self) -> int:
        """Traces whose judge call the budget refused (status ``unscored``, reason ``budget``)."""
        return int(self.counts.get("unscored", 0))

    @property
    def bin_label(self) -> str:
        """The bins' width in words (``5-minute``, ``3-hour``, ``1-day``)."""
        width = int(self.bin_width_s or 0)
        for unit, seconds in (("week", 604_800), ("day", 86_400), ("hour", 3600), ("minute", 60)):
            if width >= seconds and width % seconds == 0:
                return f"{width // seconds}-{unit}"
        return f"{width}-second"


def watch_view(record: Any, now: float) -> WatchView:
    """The page of ``record`` (a :class:`ragassay.results.watches.WatchRecord` read with its counts) at ``now``."""
    state = record.state
    history = state.get("history") or {}
    alarms = [_alarm(a) for a in record.alarms]
    columns = list(dict.fromkeys([*record.columns, *(state.get("detectors") or {})]))
    metrics = [_track(c, state, history, [a for a in alarms if a.get("metric") == c]) for c in columns]
    limits = dict(record.rules.get("budget") or {})
    return WatchView(
        run_id=record.run_id,
        name=record.name,
        project=record.project,
        now=now,
        committed_at=state.get("committed_at"),
        bin_width_s=history.get("width_s"),
        metrics=metrics,
        alarms=sorted(alarms, key=lambda a: -(a.get("fired_at") or 0.0)),
        spend=spend_windows(state.get("spend") or [], limits, now),
        limits={k: v for k, v in limits.items() if v is not None},
        counts=dict(record.counts or {}),
        drift=list(state.get("drift") or []),
        rules=record.rules,
        problem=record.problem,
    )


def spend_windows(buckets: list[list[float]], limits: dict[str, Any], now: float) -> list[Spend]:
    """Calls and dollars in the last hour and the last 24 hours before ``now`` (the minutes overlapping each),
    with the limits ``calls_per_hour`` ... ``usd_per_day``."""
    found = []
    for label, seconds, unit in WINDOWS:
        start = math.floor((now - seconds) / BUCKET_S)
        spent = [b for b in buckets if b[0] >= start]
        found.append(
            Spend(
                window=label,
                calls=sum(int(b[1]) for b in spent),
                usd=sum(float(b[2]) for b in spent),
                calls_limit=limits.get(f"calls_per_{unit}"),
                usd_limit=limits.get(f"usd_per_{unit}"),
            )
        )
    return found


def _track(column: str, state: dict[str, Any], history: dict[str, Any], alarms: list[dict[str, Any]]) -> MetricTrack:
    detector_state = (state.get("detectors") or {}).get(column)
    config = (detector_state or {}).get("config") or {}
    summary, problem = None, None
    if detector_state is None:
        problem = "no detector yet: the watch has not set this metric's reference"
    else:
        summary, problem = _summary(detector_state)
    value_range = config.get("value_range")
    width = history.get("width_s") or 0
    return MetricTrack(
        column=column,
        direction=config.get("direction"),
        value_range=(float(value_range[0]), float(value_range[1])) if value_range else None,
        margin=float(config.get("margin") or 0.0),
        summary=summary,
        bins=[_bin(row, width) for row in (history.get("columns") or {}).get(column, [])],
        alarms=alarms,
        problem=problem,
    )


def _summary(detector_state: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The detector's summary now, from its stored state (:meth:`Detector.restore`), or why it cannot be read."""
    from ..errors import RagassayError
    from .monitor import Detector

    try:
        return Detector.restore(detector_state).summary(), None
    except (RagassayError, KeyError, TypeError, ValueError) as exc:
        return None, f"the detector's stored state cannot be read: {exc}"


def _bin(row: list[Any], width: float) -> Bin:
    start, count, total = float(row[0]), int(row[1]), float(row[2])
    snapshot = dict(zip(SNAPSHOT, [*row[3:], *([None] * len(SNAPSHOT))]))
    n = snapshot.pop("n")
    return Bin(
        start=start,
        end=start + width,
        count=count,
        mean=total / count if count else None,
        n=None if n is None else int(n),
        **{k: None if v is None else float(v) for k, v in snapshot.items()},
    )


def _alarm(record: dict[str, Any]) -> dict[str, Any]:
    """The stored alarm record with its versions as ordered pairs (the stored order: first suspect first)."""
    versions = [
        (str(key), [(str(value), int(n)) for value, n in (counts or {}).items()])
        for key, counts in (record.get("versions") or {}).items()
    ]
    return {**record, "versions": versions, "worst_traces": [str(t) for t in record.get("worst_traces") or []]}
