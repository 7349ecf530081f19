"""Which samples to look at first: each system's worst samples, and the samples on which a system got worse.

* :func:`worst_samples`: per system, the ``n`` samples with the worst mean rank over the columns (rank 1 = best by
  the column's direction; an unscored value ranks last, a failed or missing output too), ties broken by the
  dataset order; the union of every system's, in dataset order (the HTML report's failure browser).
* :func:`got_worse`: the samples where a system scored worse than its baseline on one metric, the largest drops
  first (what a failed ``assert_no_regression`` shows: not samples that were already perfect).
"""

from __future__ import annotations

import numpy as np


def worst_samples(run, n: int) -> list[str]:
    """The union of every system's ``n`` worst question ids of ``run`` (:class:`ragassay.results.RunData`)."""
    scores = run.scores_frame()
    chosen: set[str] = set()
    position = run.position
    for system in run.systems:
        table = scores.loc[system]
        if table.shape[1] == 0:
            continue
        ranks = [
            table[c].rank(ascending=run.direction(c) == "lower", method="average", na_option="bottom")
            for c in table.columns
        ]
        badness = sum(ranks) / len(ranks)
        ranked = sorted(badness.index, key=lambda q: (-float(badness[q]), position.get(q, len(position))))
        chosen.update(ranked[:n])
    return sorted(chosen, key=lambda q: position.get(q, len(position)))


def got_worse(
    question_ids: list[str], system: np.ndarray, baseline: np.ndarray, direction: str, n: int
) -> list[tuple[str, float, float]]:
    """(question_id, baseline value, system value) of the ``n`` samples with the largest drop (by the metric's
    ``direction``) among those both scored, largest first, ties in dataset order."""
    sign = 1.0 if direction != "lower" else -1.0
    drop = sign * (baseline - system)
    found = [i for i in np.argsort(-np.nan_to_num(drop, nan=-np.inf), kind="stable") if drop[i] > 0]
    return [(question_ids[i], float(baseline[i]), float(system[i])) for i in found[:n]]
