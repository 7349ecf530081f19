"""The drift section of the HTML report: for a run scored from traces, the same windows and tables as
``ragassay traces trend RUN`` (:func:`ragassay.analysis.trend.trend`, rendered by :mod:`ragassay.trend_tables`),
as HTML."""

from __future__ import annotations

from .markup import note, section
from .robustness import html_table


def trend_section(run, alpha: float = 0.05, seed: int = 0) -> str:
    """Per-day windows of every metric of ``run``; empty when no sample comes from a trace."""
    from ..analysis.trend import trace_starts, trend
    from ..errors import RagassayError
    from ..trend_tables import series_tables

    if not any(start is not None for start in trace_starts(run)):
        return ""
    try:
        result = trend(run, alpha=alpha, seed=seed)
    except RagassayError as exc:
        return section("drift", "Drift over time", note(f"No drift windows: {exc}"))
    parts = [html_table(t) for t in series_tables(result)]
    legend = "per UTC day of the trace start; ragassay traces trend RUN --by week for weeks (docs/traces.md)"
    return section("drift", "Drift over time", "".join(parts), legend)
