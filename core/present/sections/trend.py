"""The drift section of the HTML report: for a run scored from traces, the same windows and tables as
``ragassay traces trend RUN`` (:func:`ragassay.analysis.trend.trend`, rendered by :mod:`ragassay.present.trend_tables`),
as section data (:mod:`ragassay.present.blocks`)."""

from __future__ import annotations

from ..blocks import Note, Section
from .robustness import block_table


def trend_section(run, alpha: float = 0.05, seed: int = 0, by: str = "day") -> Section | None:
    """Per-``by`` (day or week) windows of every metric of ``run``; None when no sample comes from a trace."""
    from ...analysis.trend import trace_starts, trend
    from ...errors import RagassayError
    from ..trend_tables import series_tables

    if not any(start is not None for start in trace_starts(run)):
        return None
    try:
        result = trend(run, by=by, alpha=alpha, seed=seed)
    except RagassayError as exc:
        return Section("drift", "Drift over time", [Note(f"No drift windows: {exc}")])
    parts = [block_table(t) for t in series_tables(result)]
    legend = f"per UTC {by} of the trace start; ragassay traces trend RUN --by day|week (docs/traces.md)"
    return Section("drift", "Drift over time", parts, legend)
