"""The breakdowns section (each breakdown's table with box plots per group) and the metric correlation matrix."""

from __future__ import annotations

from ..blocks import Note, Plot, Section
from .tables import breakdown_table


def breakdowns_section(run, breakdowns: list, skipped: dict[str, str] | None = None) -> Section:
    """Each breakdown's table and its plot of the metrics by group (rates for binary metrics, else boxes), and
    the fields not broken down by (``skipped``: field -> why)."""
    from ...analysis.breakdown import field_values, group_labels
    from ...analysis.report import skipped_line
    from .plots import MAX_PLOTTED_METRICS, groups_svg, plotted_metrics

    left_out = [Note(skipped_line(skipped))] if skipped else []
    if not breakdowns:
        none = Note("No sample field has between 2 and 8 distinct values.")
        return Section("breakdowns", "Breakdowns", [none, *left_out])
    scores, samples = run.scores_frame(), run.samples_frame()
    metrics, constant, past_cap = plotted_metrics(scores)
    ranges = {m: run.value_range(m) for m in metrics}
    parts: list = [*left_out]
    for result in breakdowns:
        labels, order, _ = group_labels(field_values(samples, result.by), result.by, result.bins)
        parts.append(breakdown_table(result))
        if metrics:
            rates = {(r.group, r.system, r.metric): (r.mean, r.ci_low, r.ci_high) for r in result.rows}
            parts.append(Plot(groups_svg(scores[metrics], labels, order, run.systems, result.by, rates, ranges)))
    legend = (
        "mean [95% BCa bootstrap interval] per group; plots: a binary metric (every value 0 or 1) as its rate with "
        "that interval, any other as box plots (quartiles and 1.5 IQR whiskers, no outliers) with the mean and that "
        "interval in black, on its declared range."
    )
    for metric in constant:
        value = scores[metric].dropna().iloc[0]
        legend += f" Not plotted: {metric} ({value:.3f} on every system and sample)."
    if past_cap:
        legend += f" Not plotted (at most {MAX_PLOTTED_METRICS} metrics per plot): {', '.join(past_cap)}."
    return Section("breakdowns", "Breakdowns", parts, legend)


def correlation_section(run) -> Section:
    """The metric correlation matrix as a plot."""
    from .plots import correlation_svg

    svg = correlation_svg(run.scores_frame())
    body = Plot(svg) if svg else Note("Fewer than two metrics: no correlation matrix.")
    legend = "Pearson r of each pair of metrics over every (system, sample) both scored (thesis Figure 5.1)."
    return Section("correlation", "Metric correlation", [body], legend)
