"""What a watched metric did over time, for the live page of ``ragassay serve``: per time bin of the traces' start
times, the count and sum of the values observed, and a snapshot of the detector's :meth:`summary` after the bin's
last value (its mean since the (re)start, the confidence sequence's bounds, the evidence and the reference then).

Bounded whatever the stream's length: at most :data:`MAX_BINS` bins per column. The bins start :data:`WIDTHS_S`\\[0]
seconds wide; when a column would hold more, every column's bins are merged into the next width of the ladder
(each width a multiple of the one before, so a bin always falls whole into one wider bin: counts and sums add up,
the snapshot is the later bin's). Kept in the watch's stored progress (``state["history"]``), committed with the
values it counts: ``{"width_s": W, "columns": {COLUMN: [[start, count, sum, mean, low, high, evidence, reference,
n], ...]}}``, oldest bin first.

A snapshot is taken when a column's next value falls in another bin than its last one (before the detector takes
that value) and for every column's last bin when the batch is committed, so each bin shows the detector as its last
value left it.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping
from typing import Any

#: bin widths in seconds: 1, 5, 15, 30 minutes, 1, 3, 6, 12 hours, 1 day, 1 week, then doubling weeks
WIDTHS_S = (60, 300, 900, 1800, 3600, 10_800, 21_600, 43_200, 86_400, 604_800)
MAX_BINS = 120
SNAPSHOT = ("mean", "low", "high", "evidence", "reference", "n")  # the detector's summary kept per bin
DIGITS = 6  # significant digits kept of a snapshot's numbers (the state is rewritten at each commit)


def next_width(width: int) -> int:
    """The width after ``width`` in the ladder (doubling past its end)."""
    for candidate in WIDTHS_S:
        if candidate > width:
            return candidate
    return width * 2


class History:
    """The bins of every watched column (module docstring); :meth:`state` is what the watch stores."""

    def __init__(self, state: Mapping[str, Any] | None = None, *, max_bins: int = MAX_BINS):
        state = state or {}
        self.width = int(state.get("width_s") or WIDTHS_S[0])
        self.max_bins = max_bins
        self.columns: dict[str, list[list[float | None]]] = {
            column: [list(b) for b in bins] for column, bins in (state.get("columns") or {}).items()
        }
        self._last: dict[str, int] = {}  # column -> the start of the bin its last value fell in (this session)

    def observe(self, column: str, value: float, at: float, summary: Callable[[], dict[str, Any]]) -> None:
        """Count ``value`` (observed at ``at``, epoch seconds) in its bin; ``summary`` gives the column's detector
        summary before it takes the value (snapshotted into the last bin when the value opens another)."""
        if not math.isfinite(value) or not math.isfinite(at):
            return
        start = math.floor(at / self.width) * self.width
        last = self._last.get(column)
        if last is not None and last != start:
            self._snapshot(column, last, summary())
        bins = self.columns.setdefault(column, [])
        found = self._find(bins, start)
        if found is None:
            found = [start, 0, 0.0, *([None] * len(SNAPSHOT))]
            bins.insert(bisect.bisect_left([b[0] for b in bins], start), found)
        found[1] += 1
        found[2] += float(value)
        self._last[column] = start
        if len(bins) > self.max_bins:
            self._coarsen()

    def state(self, summaries: Mapping[str, Callable[[], dict[str, Any]]]) -> dict[str, Any]:
        """The stored form, each column's last bin snapshotted from ``summaries`` (column -> its summary)."""
        for column, start in self._last.items():
            if column in summaries:
                self._snapshot(column, start, summaries[column]())
        return {"width_s": self.width, "columns": {c: [list(b) for b in bins] for c, bins in self.columns.items()}}

    def _snapshot(self, column: str, start: int, summary: dict[str, Any]) -> None:
        found = self._find(self.columns.get(column, []), start)
        if found is not None:
            found[3:] = [_rounded(summary.get(name)) for name in SNAPSHOT]

    def _coarsen(self) -> None:
        """Merge every column's bins into the next widths until each column fits."""
        while any(len(bins) > self.max_bins for bins in self.columns.values()):
            self.width = next_width(self.width)
            for column, bins in self.columns.items():
                self.columns[column] = _merged(bins, self.width)
            self._last = {c: math.floor(s / self.width) * self.width for c, s in self._last.items()}

    @staticmethod
    def _find(bins: list[list[Any]], start: float) -> list[Any] | None:
        if bins and bins[-1][0] == start:  # the usual case: the value falls in the latest bin
            return bins[-1]
        index = bisect.bisect_left([b[0] for b in bins], start)
        return bins[index] if index < len(bins) and bins[index][0] == start else None


def _merged(bins: list[list[Any]], width: int) -> list[list[Any]]:
    """``bins`` (oldest first) merged into bins ``width`` seconds wide: counts and sums added, the snapshot of the
    later bin (the earlier one's where the later has none)."""
    merged: list[list[Any]] = []
    for b in bins:
        start = math.floor(b[0] / width) * width
        if merged and merged[-1][0] == start:
            into = merged[-1]
            into[1] += b[1]
            into[2] += b[2]
            if b[3:] and any(v is not None for v in b[3:]):
                into[3:] = list(b[3:])
        else:
            merged.append([start, *b[1:]])
    return merged


def _rounded(value: Any) -> float | int | None:
    """A snapshot's number as stored: ints (counts) exact, floats to :data:`DIGITS` significant digits, None for
    what is missing or not finite."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    value = float(value)
    return float(f"{value:.{DIGITS}g}") if math.isfinite(value) else None
