"""The breakdowns section (each breakdown's table with box plots per group) and the metric correlation matrix."""

from __future__ import annotations

from ..blocks import Note, Plot, Section
from .tables import breakdown_table


def breakdowns_section(run, breakdowns: list) -> Section:
    """Each breakdown's table and its box plots."""
    from ...analysis.breakdown import field_values, group_labels
    from .plots import box_svg

    if not breakdowns:
        return Section("breakdowns", "Breakdowns", [Note("No sample field has between 2 and 8 distinct values.")])
    scores, samples = run.scores_frame(), run.samples_frame()
    parts: list = []
    for result in breakdowns:
        labels, order, _ = group_labels(field_values(samples, result.by), result.by, result.bins)
        parts += [breakdown_table(result), Plot(box_svg(scores, labels, order, run.systems, result.by))]
    legend = "mean [95% BCa bootstrap interval] per group; box plots: quartiles and 1.5 IQR whiskers, no outliers."
    return Section("breakdowns", "Breakdowns", parts, legend)


def correlation_section(run) -> Section:
    """The metric correlation matrix as a plot."""
    from .plots import correlation_svg

    svg = correlation_svg(run.scores_frame())
    body = Plot(svg) if svg else Note("Fewer than two metrics: no correlation matrix.")
    legend = "Pearson r of each pair of metrics over every (system, sample) both scored (thesis Figure 5.1)."
    return Section("correlation", "Metric correlation", [body], legend)
