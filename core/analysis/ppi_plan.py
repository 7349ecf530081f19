"""``plan --labelled METRIC=RUBRIC``: how many labels would settle a comparison, from the agreement measured on
the labels so far.

For each system against the baseline, on the labelled samples: the spread of the label differences (sd_Y), of the
judge's differences (sd_f) and their correlation; :func:`ragassay.analysis.ppi.labels_needed` then gives the fewest
labels of the n paired samples (the rest judged only) for which PPI++'s interval is at most ``half_width`` either
side, beside what the labels alone would need, ceil((z sd_Y / half_width)^2). The default half-width is the size of
the difference measured now: an interval that narrow excludes 0 when the difference holds, so it settles the
comparison. The estimate now is the active one where an active queue drew the labels
(:func:`ragassay.analysis.ppi_verdicts.estimate`); the labels needed assume further labels drawn at random.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from .human_labels import HumanLabel
from .ppi import labels_needed
from .ppi_decisions import run_pair
from .ppi_labels import Labelled, check_labelled
from .ppi_verdicts import estimate as ppi_estimate
from .ppi_verdicts import side_values


@dataclasses.dataclass(frozen=True)
class LabelPlan:
    """The labels one comparison needs for an interval of ``half_width`` either side."""

    metric: str
    rubric: str
    baseline: str
    system: str
    samples: int  # paired samples (labelled or not)
    labelled: int  # labelled now
    sd_labels: float | None
    sd_judge: float | None
    correlation: float | None
    estimate: float | None  # the prediction-powered difference now
    half_width: float | None
    needed: int | None  # labels PPI++ needs (None: more than the samples allow)
    needed_labels_only: int | None  # labels the labels alone need (None: more than the samples)
    reason: str = ""


def plan_labels(
    run,
    labels: Sequence[HumanLabel],
    labelled: Sequence[Labelled],
    *,
    baseline: str | None = None,
    half_width: float | None = None,
    confidence: float = 0.95,
    source: str = "",
) -> list[LabelPlan]:
    """One :class:`LabelPlan` per labelled metric and system other than ``baseline`` (module docstring)."""
    rubrics = check_labelled(run, labelled, labels, source or "the labels")
    baseline = baseline or run.systems[0]
    plans = []
    for entry in labelled:
        rubric = rubrics[entry.metric]
        scale, matched = side_values(run, labels, entry, rubric)
        for system in [s for s in run.systems if s != baseline]:
            item = run_pair(run, entry.metric, baseline, system, rubric, scale, matched)
            plans.append(_plan(entry, baseline, system, item, half_width, confidence))
    return plans


def _plan(entry: Labelled, baseline: str, system: str, item, half_width: float | None, confidence: float) -> LabelPlan:
    n, samples = len(item.truth), len(item.truth) + len(item.judged_unlabelled)
    common = dict(metric=entry.metric, rubric=entry.rubric, baseline=baseline, system=system, samples=samples)
    if not item.ready:
        return LabelPlan(**common, labelled=n, sd_labels=None, sd_judge=None, correlation=None, estimate=None,
                         half_width=half_width, needed=None, needed_labels_only=None,
                         reason=f"{n} labels, need 2 (and 2 unlabelled samples) to measure the agreement")  # fmt: skip
    y, f = np.asarray(item.truth), np.asarray(item.judged_labelled)
    sd_y, sd_f = float(y.std(ddof=1)), float(f.std(ddof=1))
    corr = float(np.corrcoef(y, f)[0, 1]) if sd_y > 0 and sd_f > 0 else 0.0
    estimate = ppi_estimate(
        item.truth, item.judged_labelled, item.judged_unlabelled, item.probabilities, confidence
    ).estimate
    width = abs(estimate) if half_width is None else half_width
    reason = "" if width > 0 else "the difference measured now is 0: give --width"
    needed = labels_needed(sd_y, sd_f, corr, samples, width, confidence) if width > 0 else None
    alone = math.ceil((NormalDist().inv_cdf(0.5 + confidence / 2) * sd_y / width) ** 2) if width > 0 else None
    return LabelPlan(**common, labelled=n, sd_labels=sd_y, sd_judge=sd_f, correlation=corr, estimate=estimate,
                     half_width=width, needed=needed, needed_labels_only=alone if alone and alone <= samples else None,
                     reason=reason)  # fmt: skip
