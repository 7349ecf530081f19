"""Hypothesis testing over clusters of text queries (GRAMMAR section 4.2, Table 2).

A hypothesis splits the text queries by one attribute of their text template into the cluster expected to
be robust (D_robust) and the one expected not to be (D_non-robust), e.g. short vs long queries. Groups are
categorised over both clusters together, so the gap groups common to both clusters (no form of the query
logic answered) are excluded from R of each cluster (Eq. 1), and both clusters are scored by Acc and R:

- for every sampling variant (all samples, unbalanced US, stratified SS),
- as is, and with LM-induced failures excluded (+Modular Evaluation (Retrieval)), by context comparison and,
  where reference documents are known, by ground truth.

A metric "separates" the clusters when it scores the robust cluster higher (Table 2's "Success?"). Each row
also answers that question with a 95% bootstrap interval of the difference between the clusters' Acc (the mean
correctness over a cluster's instances) and R (the mean correctness over its instances outside gap groups):
"yes" when the interval lies above 0, "no" when below, "not detectable" when it holds 0
(:func:`ragassay.analysis.bootstrap.difference_ci`: BCa, 1,000 resamples, seeded, unpaired: the clusters hold
different queries); without an interval the answer is None with the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..config.analysis import Hypothesis, SamplingSettings
from ..sampling import stratified_subset, unbalanced_subset
from .bootstrap import difference_ci
from .groups import GAP, Outcome, Scores, categorize, score
from .modular import blame_counts, context_blame, ground_truth_blame, has_references, without_lm_failures

YES, NO, NOT_DETECTABLE = "yes", "no", "not detectable"
DIFFERENCE_SEED = 0


@dataclasses.dataclass(frozen=True)
class ClusterTest:
    """mean(robust cluster) - mean(non-robust cluster), its 95% interval and the answer (None with a reason)."""

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    n_first: int
    n_second: int
    answer: str | None
    reason: str | None = None


def cluster_test(first: Sequence[float], second: Sequence[float]) -> ClusterTest:
    """Whether the first cluster scores higher: yes / no / not detectable by the interval (module docstring)."""
    iv = difference_ci(first, second, seed=DIFFERENCE_SEED)
    answer = None
    if iv.ci_low is not None:
        answer = YES if iv.ci_low > 0 else NO if iv.ci_high < 0 else NOT_DETECTABLE
    return ClusterTest(iv.difference, iv.ci_low, iv.ci_high, iv.n_first, iv.n_second, answer, iv.reason)


MODULAR_LABELS = {
    None: "",
    "context": "+Modular Evaluation (Retrieval)",
    "ground_truth": "+Modular Evaluation (Retrieval, ground truth)",
}


@dataclasses.dataclass(frozen=True)
class ClusterRow:
    """One row of the Table 2 shape: a sampling variant, optionally modular, scored per cluster."""

    sampling: str  # "All samples", "Unbalanced Sampling (US)", "Stratified Sampling (SS)"
    modular: str | None  # None, "context" (context comparison) or "ground_truth"
    robust: Scores
    non_robust: Scores
    excluded_lm: int = 0  # answers excluded as LM-induced failures (modular rows)
    acc_test: ClusterTest | None = None  # Acc robust - Acc non-robust, interval and answer
    r_test: ClusterTest | None = None  # R robust - R non-robust, interval and answer

    __json_properties__ = ("label",)

    @property
    def label(self) -> str:
        return f"{self.sampling} {MODULAR_LABELS[self.modular]}".strip()

    def separates(self, metric: str) -> bool | None:
        """Whether ``metric`` ('Acc' or 'R') scores the robust cluster higher; None if undefined."""
        a, b = (getattr(s, "accuracy" if metric == "Acc" else "robustness") for s in (self.robust, self.non_robust))
        return None if a is None or b is None else a > b


def sampling_variants(outcomes: Sequence[Outcome], sampling: SamplingSettings) -> list[tuple[str, list[Outcome]]]:
    """(label, subset) for all samples and each configured sampling (seeded, reproducible)."""
    variants = [("All samples", list(outcomes))]
    if sampling.unbalanced is not None:
        us = sampling.unbalanced
        variants.append(
            ("Unbalanced Sampling (US)", unbalanced_subset(outcomes, us.reduce, attribute=us.attribute, seed=us.seed))
        )
    if sampling.stratified is not None:
        ss = sampling.stratified
        variants.append(("Stratified Sampling (SS)", stratified_subset(outcomes, ss.per_group, by=ss.by, seed=ss.seed)))
    return variants


def cluster_of(outcome: Outcome, hypothesis: Hypothesis) -> str | None:
    """'robust', 'non_robust' or None (the outcome's attribute value is in neither cluster)."""
    value = str(outcome.attributes.get(hypothesis.attribute))
    if value in {str(v) for v in hypothesis.robust}:
        return "robust"
    if value in {str(v) for v in hypothesis.non_robust}:
        return "non_robust"
    return None


def _row(
    label: str, modular: str | None, outcomes: Sequence[Outcome], hypothesis: Hypothesis, excluded: int = 0
) -> ClusterRow:
    categories = categorize(outcomes)
    robust = [o for o in outcomes if cluster_of(o, hypothesis) == "robust"]
    non_robust = [o for o in outcomes if cluster_of(o, hypothesis) == "non_robust"]
    acc_test = cluster_test([o.correct for o in robust], [o.correct for o in non_robust])
    competent = ([o.correct for o in cluster if categories[o.group_id] != GAP] for cluster in (robust, non_robust))
    r_test = cluster_test(*competent)
    scores = score(robust, categories), score(non_robust, categories)
    return ClusterRow(label, modular, *scores, excluded, acc_test, r_test)


def evaluate_hypothesis(
    outcomes: Sequence[Outcome], hypothesis: Hypothesis, label: str = "All samples", match: str = "same_set"
) -> list[ClusterRow]:
    """The rows of one sampling variant: as is, +modular (context comparison), +modular (ground truth)."""
    scoped = [o for o in outcomes if cluster_of(o, hypothesis) is not None]
    rows = [_row(label, None, scoped, hypothesis)]
    blame = context_blame(scoped, categorize(scoped), match)
    kept = without_lm_failures(scoped, blame)
    rows.append(_row(label, "context", kept, hypothesis, blame_counts(blame)["lm"]))
    if has_references(scoped):
        truth = ground_truth_blame(scoped)
        kept = without_lm_failures(scoped, truth)
        rows.append(_row(label, "ground_truth", kept, hypothesis, blame_counts(truth)["lm"]))
    return rows


def hypothesis_table(
    outcomes: Sequence[Outcome], hypothesis: Hypothesis, sampling: SamplingSettings, match: str = "same_set"
) -> list[ClusterRow]:
    """Every row of the Table 2 shape for one hypothesis and one system."""
    return [
        row
        for label, subset in sampling_variants(outcomes, sampling)
        for row in evaluate_hypothesis(subset, hypothesis, label, match)
    ]
