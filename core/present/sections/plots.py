"""The report's plots, drawn with matplotlib (Agg) and inlined as SVG.

* the metric correlation matrix across samples (the thesis' Figure 5.1): Pearson correlation of every pair of
  metric and judge columns over the (system, sample) rows where both are scored;
* per-group box plots (the thesis' Figure 5.2): the distribution of each metric per group of a sample field,
  one box per system (outliers left out, so a large run stays small).

The SVG is deterministic: a fixed ``svg.hashsalt`` (element ids), text kept as text (``svg.fonttype = none``),
no date or creator metadata, and no namespace URLs (the HTML parser places inline SVG itself).
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

MAX_BOX_METRICS = 6
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


def box_svg(scores: pd.DataFrame, labels: pd.Series, groups: list[str], systems: list[str], by: str) -> str:
    """Box plots of each metric (up to :data:`MAX_BOX_METRICS`) per group of ``by``, one box per system.

    ``scores`` is indexed by (system, question_id); ``labels`` maps question_id to its group.
    """
    import matplotlib

    plt = _pyplot()
    metrics = list(scores.columns)[:MAX_BOX_METRICS]
    with matplotlib.rc_context(_RC):
        width = max(4.0, 0.5 * len(groups) * len(systems) + 1.5)
        figure, axes = plt.subplots(len(metrics), 1, figsize=(width, 2.2 * len(metrics)), squeeze=False)
        colours = plt.get_cmap("tab10").colors
        for axis, metric in zip(axes[:, 0], metrics):
            _boxes(axis, scores[metric], labels, groups, systems, colours)
            axis.set_ylabel(metric)
        axes[0, 0].legend(
            handles=[matplotlib.patches.Patch(color=colours[k % 10], label=s) for k, s in enumerate(systems)],
            fontsize=7,
            loc="upper right",
        )
        axes[-1, 0].set_xlabel(by)
        figure.suptitle(f"Metric distribution by {by}")
        return to_svg(figure)


def _boxes(axis, column, labels, groups, systems, colours) -> None:
    step = len(systems) + 1
    for k, system in enumerate(systems):
        values = column.loc[system].reindex(labels.index)
        data = [values[(labels == g).to_numpy()].dropna().to_numpy() for g in groups]
        positions = [g * step + k for g in range(len(groups))]
        plot = axis.boxplot(data, positions=positions, widths=0.8, showfliers=False, patch_artist=True)
        for patch in plot["boxes"]:
            patch.set_facecolor(colours[k % 10])
    axis.set_xticks([g * step + (len(systems) - 1) / 2 for g in range(len(groups))], groups)
