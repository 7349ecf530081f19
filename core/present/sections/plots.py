"""The report's plots, drawn with matplotlib (Agg) and inlined as SVG.

* the metric correlation matrix across samples (the thesis' Figure 5.1): Pearson correlation of every pair of
  metric and judge columns over the (system, sample) rows where both are scored;
* per-group plots of each metric by the groups of a sample field (the thesis' Figure 5.2), one mark per system:
  a binary metric (every scored value 0 or 1: exact match, a judge's verdict) as its rate with the 95% interval
  of the breakdown table, since a box of 0s and 1s hides the failures (a group at 0.78 is a box at 1.0); any
  other metric as box plots (quartiles, 1.5 IQR whiskers, outliers left out so a large run stays small) with the
  mean and its interval drawn over each box, on the metric's declared range when it has one. The caller leaves
  constant metrics out (:func:`plotted_metrics`).

The SVG is deterministic: a fixed ``svg.hashsalt`` (element ids), text kept as text (``svg.fonttype = none``),
no date or creator metadata, and no namespace URLs (the HTML parser places inline SVG itself).
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

MAX_PLOTTED_METRICS = 6
_RC = {"svg.hashsalt": "ragassay-report", "svg.fonttype": "none", "font.size": 9, "axes.titlesize": 9}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def to_svg(figure):
    """``figure`` as an inline ``<svg>`` element (no XML prolog, DOCTYPE, metadata or namespace URLs), as
    :class:`markupsafe.Markup` (matplotlib escapes every text it draws)."""
    from markupsafe import Markup

    plt = _pyplot()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    plt.close(figure)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    return Markup(re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg))


def correlation_svg(scores: pd.DataFrame) -> str | None:
    """The correlation matrix of the columns of ``scores`` (one row per system x sample); None with fewer
    than two columns."""
    if scores.shape[1] < 2:
        return None
    import matplotlib

    plt = _pyplot()
    corr = scores.corr(method="pearson", min_periods=2)
    labels = list(corr.columns)
    size = 1.2 + 0.6 * len(labels)
    with matplotlib.rc_context(_RC):
        figure, axes = plt.subplots(figsize=(size + 1.5, size))
        image = axes.imshow(corr.to_numpy(), vmin=-1, vmax=1, cmap="RdBu_r")
        axes.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
        axes.set_yticks(range(len(labels)), labels)
        for i in range(len(labels)):
            for j in range(len(labels)):
                value = corr.iat[i, j]
                axes.text(j, i, "-" if value != value else f"{value:.2f}", ha="center", va="center", fontsize=8)
        figure.colorbar(image, ax=axes, shrink=0.8, label="Pearson r")
        axes.set_title("Metric correlation across samples")
        return to_svg(figure)


def plotted_metrics(scores: pd.DataFrame) -> tuple[list[str], list[str], list[str]]:
    """(metrics to plot, in order, at most :data:`MAX_PLOTTED_METRICS`; constant metrics, equal on every scored value;
    metrics past the cap) of the columns of ``scores``."""
    varying, constant = [], []
    for metric in scores.columns:
        values = scores[metric].dropna()
        (constant if len(values) and values.nunique() == 1 else varying).append(metric)
    return varying[:MAX_PLOTTED_METRICS], constant, varying[MAX_PLOTTED_METRICS:]


def is_binary(values: pd.Series) -> bool:
    """Whether every scored value is 0 or 1 (a rate, not a distribution)."""
    scored = values.dropna()
    return len(scored) > 0 and bool(scored.isin([0.0, 1.0]).all())


def groups_svg(
    scores: pd.DataFrame,
    labels: pd.Series,
    groups: list[str],
    systems: list[str],
    by: str,
    rates: dict[tuple[str, str, str], tuple],
    ranges: dict[str, tuple[float | None, float | None]],
) -> str:
    """One panel per column of ``scores`` (indexed by (system, question_id)) by the groups of ``by`` (``labels``
    maps question_id to its group), one mark per system: a binary column as its rate with its interval from
    ``rates`` ((group, system, metric) -> (mean, low, high)), any other as box plots on its declared ``ranges``."""
    import matplotlib

    plt = _pyplot()
    metrics = list(scores.columns)
    with matplotlib.rc_context(_RC):
        width = max(4.0, 0.5 * len(groups) * len(systems) + 1.5)
        figure, axes = plt.subplots(len(metrics), 1, figsize=(width, 2.2 * len(metrics)), squeeze=False)
        colours = plt.get_cmap("tab10").colors
        for axis, metric in zip(axes[:, 0], metrics):
            if is_binary(scores[metric]):
                _means(axis, metric, groups, systems, rates, colours)
                axis.set_ylim(-0.04, 1.04)
                axis.set_ylabel(f"{metric}\n(rate, 95% CI)")
            else:
                _boxes(axis, scores[metric], labels, groups, systems, colours)
                _means(axis, metric, groups, systems, rates, ["black"])
                _declared_range(axis, ranges.get(metric, (None, None)))
                axis.set_ylabel(metric)
            axis.set_xticks([g * (len(systems) + 1) + (len(systems) - 1) / 2 for g in range(len(groups))], groups)
        axes[0, 0].legend(
            handles=[matplotlib.patches.Patch(color=colours[k % 10], label=s) for k, s in enumerate(systems)],
            fontsize=7,
            loc="upper right",
        )
        axes[-1, 0].set_xlabel(by)
        figure.suptitle(f"Metrics by {by}")
        return to_svg(figure)


def _means(axis, metric, groups, systems, rates, colours) -> None:
    """Each (group, system) mean as a point with its interval as an error bar."""
    step = len(systems) + 1
    for k, system in enumerate(systems):
        for g, group in enumerate(groups):
            mean, low, high = rates.get((group, system, metric), (None, None, None))
            if mean is None:
                continue
            error = None if low is None else [[mean - low], [high - mean]]
            colour = colours[k % len(colours)]
            axis.errorbar(g * step + k, mean, yerr=error, fmt="D", color=colour, capsize=3, markersize=3.5)
    axis.set_xlim(-1, len(groups) * step - 1)


def _boxes(axis, column, labels, groups, systems, colours) -> None:
    step = len(systems) + 1
    for k, system in enumerate(systems):
        values = column.loc[system].reindex(labels.index)
        data = [values[(labels == g).to_numpy()].dropna().to_numpy() for g in groups]
        positions = [g * step + k for g in range(len(groups))]
        plot = axis.boxplot(data, positions=positions, widths=0.8, showfliers=False, patch_artist=True)
        for patch in plot["boxes"]:
            patch.set_facecolor(colours[k % 10])


def _declared_range(axis, declared: tuple[float | None, float | None]) -> None:
    """The y axis over the metric's declared range (with a 4% margin) where both ends are known."""
    low, high = declared
    if low is not None and high is not None and high > low:
        margin = 0.04 * (high - low)
        axis.set_ylim(low - margin, high + margin)
