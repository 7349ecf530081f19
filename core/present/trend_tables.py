"""Rendering a :class:`ragassay.analysis.trend.Trend`: the tables of ``ragassay traces trend RUN`` and the HTML
report's drift section. Rendering only: every number comes from the analysis."""

from __future__ import annotations

from .tables import Column, Table, number_text


def _interval(low, high, signed: bool = False) -> str:
    if low is None or high is None:
        return ""
    if signed:
        return f" [{low:+.2f}, {high:+.2f}]"
    return f" [{low:.2f}, {high:.2f}]"


def _mean(row: dict) -> str:
    return number_text(row["mean"]) + _interval(row["ci_low"], row["ci_high"]) if row["mean"] is not None else "-"


def _difference(row: dict) -> str:
    if row["reference"]:
        return "reference"
    if row["difference"] is None:
        return "-"
    return f"{row['difference']:+.3f}" + _interval(row["diff_low"], row["diff_high"], signed=True)


def _flag(row: dict) -> str:
    return f"{row['flag']} ({row['change']})" if row["flag"] else ""


def rows(trend, windows=None) -> list[dict]:
    """One plain row per window."""
    return [
        {
            "system": w.system,
            "metric": w.metric,
            "window": w.window,
            "start_ns": w.start_ns,
            "n": w.n,
            "unscored": w.unscored,
            "mean": w.mean,
            "ci_low": w.ci_low,
            "ci_high": w.ci_high,
            "reference": w.reference,
            "difference": w.difference,
            "diff_low": w.diff_low,
            "diff_high": w.diff_high,
            "flag": w.flag,
            "change": w.change,
            "reason": w.reason,
        }
        for w in (trend.windows if windows is None else windows)
    ]


KEYS = ("system", "metric", "window")  # what identifies a row: repeated in every part of a split table


def _columns(with_keys: bool) -> list[Column]:
    return [
        Column("system", in_text=with_keys),
        Column("metric", in_text=with_keys),
        Column("window"),
        Column("start_ns", numeric=True, in_text=False),
        Column("n", numeric=True),
        Column("unscored", numeric=True, in_text=False),
        Column("mean", header="mean [95% CI]", numeric=True, show=_mean),
        Column("ci_low", numeric=True, in_text=False),
        Column("ci_high", numeric=True, in_text=False),
        Column("reference", in_text=False),
        Column("difference", header="vs reference", numeric=True, show=_difference),
        Column("diff_low", numeric=True, in_text=False),
        Column("diff_high", numeric=True, in_text=False),
        Column("flag", show=_flag),
        Column("change", in_text=False),
        Column("reason", in_text=False),
    ]


def notes(trend) -> list[str]:
    """The legend: what the intervals are and what a flag means; samples outside every window."""
    lines = [
        f"windows: UTC {'days' if trend.by == 'day' else 'ISO weeks'} of the trace start; reference "
        f"{trend.reference}. Flag: the difference's interval (Bonferroni over the windows of the series, family "
        f"level {trend.alpha:g}) excludes 0 (docs/traces.md)"
    ]
    if trend.untimed:
        lines.append(f"{trend.untimed} sample(s) carry no trace start and are in no window")
    return lines


def series_tables(trend) -> list[Table]:
    """One table per system x metric, readable at 80 columns."""
    tables = []
    for system in trend.systems:
        for metric in trend.metrics:
            title = f"{metric} of {system} by {trend.by}"
            tables.append(Table(title, _columns(False), rows(trend, trend.series(system, metric)), id_columns=KEYS))
    if tables:
        tables[-1].notes = notes(trend)
    return tables


def trend_table(trend) -> Table:
    """Every window in one table (csv, json)."""
    return Table(f"trend by {trend.by}", _columns(True), rows(trend), notes(trend), id_columns=KEYS)
