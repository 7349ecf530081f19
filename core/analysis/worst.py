"""Which samples to look at first: each system's worst samples, and the samples on which a system got worse.

* :func:`badness`: per system and sample, the mean rank over the columns (rank 1 = best by the column's
  direction; an unscored value ranks last, a failed or missing output too), as a share of the samples;
* :func:`worst_samples`: per system, the ``n`` samples with the worst mean rank, ties broken by the dataset
  order; the union of every system's, in dataset order (the HTML report's failure browser, which shows their
  rows worst first by :func:`badness`, as ``ragassay serve``'s failure browser does without a metric).
* :func:`got_worse`: the samples where a system scored worse than its baseline on one metric, the largest drops
  first (what a failed ``assert_no_regression`` shows: not samples that were already perfect).
"""

from __future__ import annotations

import numpy as np


def badness(run) -> dict[str, np.ndarray]:
    """Per system of ``run`` (:class:`ragassay.results.RunData`), each sample's mean rank over the columns as a
    share of the samples, in sample order: near 0 for the best sample on every column, 1 for the worst (rank 1 =
    best by the column's direction, ties averaged; an unscored value, a failed or missing output rank last). A
    system, or a run, without a column gets zeros."""
    import pandas as pd

    count = len(run.question_ids)
    found = {}
    for system in run.systems:
        ranks = [
            pd.Series(run.values(system, c)).rank(ascending=run.direction(c) == "lower", na_option="bottom")
            for c in run.columns
        ]
        total = sum(ranks[1:], ranks[0]).to_numpy() if ranks else np.zeros(count)
        found[system] = total / (len(ranks) * count) if ranks and count else np.zeros(count)
    return found


def worst_samples(run, n: int) -> list[str]:
    """The union of every system's ``n`` worst question ids of ``run`` (:class:`ragassay.results.RunData`) by
    :func:`badness`, ties in dataset order; in dataset order."""
    if not run.columns:
        return []
    chosen: set[int] = set()
    for values in badness(run).values():
        chosen.update(np.argsort(-values, kind="stable")[:n].tolist())
    return [run.question_ids[i] for i in sorted(chosen)]


def got_worse(
    question_ids: list[str], system: np.ndarray, baseline: np.ndarray, direction: str, n: int
) -> list[tuple[str, float, float]]:
    """(question_id, baseline value, system value) of the ``n`` samples with the largest drop (by the metric's
    ``direction``) among those both scored, largest first, ties in dataset order."""
    sign = 1.0 if direction != "lower" else -1.0
    drop = sign * (baseline - system)
    found = [i for i in np.argsort(-np.nan_to_num(drop, nan=-np.inf), kind="stable") if drop[i] > 0]
    return [(question_ids[i], float(baseline[i]), float(system[i])) for i in found[:n]]
