"""The chart of one watched metric on the live page of a watch: its values over time (the mean of each time bin of
the traces' start times), the detector's mean since its (re)start with its confidence sequence after each bin, the
reference with its margin band, and each alarm (the change's start to the moment it fired, shaded, a line when it
fired). Drawn with matplotlib (Agg) as inline SVG like the report's plots (:func:`ragassay.present.sections.plots.
to_svg`: deterministic, no external asset); no stored string is drawn (the metric's name is the page's heading), so
the SVG holds only numbers, dates and fixed labels.

A ``matplotlib.figure.Figure`` of its own (no pyplot state), so two requests may draw at once.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

WIDTH_IN, HEIGHT_IN = 7.5, 2.8
RC = {"svg.hashsalt": "ragassay-watch", "svg.fonttype": "none", "font.size": 8, "timezone": "UTC"}


def metric_svg(track: Any):
    """The chart of ``track`` (:class:`ragassay.analysis.watch_view.MetricTrack`) as inline SVG markup; None when it
    has no bin yet."""
    if not track.bins:
        return None
    import matplotlib
    from matplotlib.figure import Figure

    from ..sections.plots import to_svg

    with matplotlib.rc_context(RC):
        figure = Figure(figsize=(WIDTH_IN, HEIGHT_IN))
        axes = figure.subplots()
        _band(axes, track)
        _sequence(axes, track)
        _means(axes, track)
        _alarms(axes, track)
        _axes(axes, track)
        return to_svg(figure)


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _steps(bins: list[Any], value) -> tuple[list[datetime], list[float]]:
    """Each bin's ``value(bin)`` held over [start, end), a gap (NaN) between bins that do not touch."""
    xs: list[datetime] = []
    ys: list[float] = []
    for previous, current in zip([None, *bins], bins):
        if previous is not None and previous.end < current.start:
            xs.append(_when(previous.end))
            ys.append(math.nan)
        y = value(current)
        y = math.nan if y is None else y
        xs += [_when(current.start), _when(current.end)]
        ys += [y, y]
    return xs, ys


def _band(axes, track) -> None:
    """The reference (dashed) and reference +- margin (grey), as each bin's snapshot had them."""
    xs, reference = _steps(track.bins, lambda b: b.reference)
    if track.margin > 0:
        low = [r - track.margin for r in reference]
        high = [r + track.margin for r in reference]
        axes.fill_between(xs, low, high, color="0.85", linewidth=0, label=f"reference \u00b1 margin {track.margin:g}")
    axes.plot(xs, reference, color="0.35", linestyle="--", linewidth=1, label="reference")


def _sequence(axes, track) -> None:
    """The mean since the detector's (re)start and its confidence sequence, after each bin."""
    xs, low = _steps(track.bins, lambda b: b.low)
    _, high = _steps(track.bins, lambda b: b.high)
    _, mean = _steps(track.bins, lambda b: b.since_mean)
    axes.fill_between(xs, low, high, color="#9ecae1", alpha=0.6, linewidth=0, label="confidence sequence")
    axes.plot(xs, mean, color="#08519c", linewidth=1.2, label="mean since start")


def _means(axes, track) -> None:
    """Each bin's own mean, a dot at the bin's middle."""
    xs = [_when((b.start + b.end) / 2) for b in track.bins if b.mean is not None]
    ys = [b.mean for b in track.bins if b.mean is not None]
    axes.plot(xs, ys, linestyle="none", marker="o", markersize=2.5, color="#444", label="mean per bin")


def _alarms(axes, track) -> None:
    for k, alarm in enumerate(track.alarms):
        fired, started = alarm.get("fired_at"), alarm.get("started_at")
        if fired is None:
            continue
        if started is not None and started < fired:
            axes.axvspan(_when(started), _when(fired), color="#fcbba1", alpha=0.5, linewidth=0)
        axes.axvline(_when(fired), color="#a50f15", linewidth=1.2, label="alarm" if k == 0 else None)


def _axes(axes, track) -> None:
    import matplotlib.dates as mdates

    if track.value_range is not None:
        low, high = track.value_range
        pad = 0.04 * (high - low)
        axes.set_ylim(low - pad, high + pad)
    locator = mdates.AutoDateLocator(tz=timezone.utc, minticks=3, maxticks=7)
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=timezone.utc))
    axes.set_xlabel("trace start (UTC)")
    axes.grid(True, color="0.92", linewidth=0.6)
    axes.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=3, frameon=False)
