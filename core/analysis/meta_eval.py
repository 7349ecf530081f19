"""Judge meta-evaluation: how far can a judge be trusted? Pure functions over (truth, prediction) pairs.

A judge is read as a *detector of correct answers* (GRAMMAR, seeds/000 section 4.1 and Table 1): the positive
class is "the answer is correct", the ground truth is the answer's real correctness (exact answers, the
``match`` judge on reference answers, or human labels) and the judge's verdict is the prediction. With the
counts TP (judged correct, is correct), FP (judged correct, is not), FN (judged incorrect, is correct) and TN:

- precision = TP / (TP + FP): of the answers the judge calls correct, the share that are (Table 1 "Precision");
- recall = TP / (TP + FN): of the correct answers, the share the judge calls correct (Table 1 "Recall");
- accuracy = (TP + TN) / n;
- Cohen's kappa = (p_o - p_e) / (1 - p_e), with p_o = accuracy and p_e = p_t p_j + (1 - p_t)(1 - p_j), p_t and p_j
  the shares of answers that are correct and that the judge calls correct (Cohen 1960, Eq. 1): agreement beyond
  chance, 0 for a judge that agrees only as often as chance would, 1 for perfect agreement;
- Youden's J = recall + TN / (TN + FP) - 1 (Youden 1950), the criterion that chooses a threshold.

A statistic whose denominator is zero is None (undefined), never 0 or NaN. Each comes with a 95% interval that
stays inside its range: precision, recall and accuracy are proportions (successes out of a known denominator)
and get the **Wilson score interval** (Wilson 1927, *Probable inference, the law of succession, and statistical
inference*, JASA 22; Agresti & Coull 1998 recommend it over the Wald interval, which leaves [0, 1] near the
bounds)::

    p = k / n,  z = z_(1 - (1 - level) / 2)
    centre = (p + z^2 / 2n) / (1 + z^2 / n),   half = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / 4n^2)

Kappa is no proportion: its interval is the seeded percentile bootstrap of :mod:`ragassay.analysis.bootstrap`
(the pairs resampled ``resamples`` times; resamples where kappa is undefined are left out), inside [-1, 1].

Corrected estimates (:func:`ppi_mean`): prediction-powered inference for a mean (Angelopoulos, Bates, Fannjiang,
Jordan, Zrnic, "Prediction-powered inference", Science 382, 2023, section "Mean estimation"; ARES, Saad-Falcon et
al. 2024, uses it for RAG judges). For a rate (a share of correct answers) the interval is intersected with [0, 1],
where the rate lies, so it never claims an impossible value and never covers less; an estimate outside [0, 1] (a
rectifier measured on few labels can push it there) is moved to the nearest bound, so the estimate always lies in
its interval, and the value it had is kept (:attr:`PPIEstimate.clipped_from`) for the report to say so.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Sequence

STATISTICS = ("precision", "recall", "accuracy", "kappa")


@dataclasses.dataclass(frozen=True)
class Confusion:
    """Counts of a judge read as a detector of correct answers (positive: correct)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @classmethod
    def of(cls, truth: Sequence[bool], judged: Sequence[bool]) -> Confusion:
        """Count the pairs (truth[i], judged[i])."""
        if len(truth) != len(judged):
            raise ValueError(f"{len(truth)} truths but {len(judged)} judgements")
        tp = sum(1 for t, j in zip(truth, judged) if t and j)
        fp = sum(1 for t, j in zip(truth, judged) if not t and j)
        fn = sum(1 for t, j in zip(truth, judged) if t and not j)
        return cls(tp, fp, fn, len(truth) - tp - fp - fn)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def precision(c: Confusion) -> float | None:
    """TP / (TP + FP); None when the judge calls nothing correct."""
    return _ratio(c.tp, c.tp + c.fp)


def recall(c: Confusion) -> float | None:
    """TP / (TP + FN); None when no answer is correct."""
    return _ratio(c.tp, c.tp + c.fn)


def accuracy(c: Confusion) -> float | None:
    """(TP + TN) / n; None for no pairs."""
    return _ratio(c.tp + c.tn, c.n)


def specificity(c: Confusion) -> float | None:
    """TN / (TN + FP); None when every answer is correct."""
    return _ratio(c.tn, c.tn + c.fp)


def cohen_kappa(c: Confusion) -> float | None:
    """(p_o - p_e) / (1 - p_e) (Cohen 1960); None when p_e = 1 (both raters constant and equal) or no pairs.

    Computed in integers by the equivalent 2x2 form 2 (TP TN - FN FP) / ((TP + FP)(FP + TN) + (TP + FN)(FN + TN)),
    so a judge that agrees only by chance gets exactly 0, not a rounding residue.
    """
    denominator = (c.tp + c.fp) * (c.fp + c.tn) + (c.tp + c.fn) * (c.fn + c.tn)
    return 2 * (c.tp * c.tn - c.fn * c.fp) / denominator if denominator else None


def youden_j(c: Confusion) -> float | None:
    """recall + specificity - 1; None when either is undefined."""
    r, s = recall(c), specificity(c)
    return None if r is None or s is None else r + s - 1


STATISTIC_FUNCTIONS: dict[str, Callable[[Confusion], float | None]] = {
    "precision": precision,
    "recall": recall,
    "accuracy": accuracy,
    "kappa": cohen_kappa,
}


@dataclasses.dataclass(frozen=True)
class Statistic:
    """One statistic of a judge with its 95% interval (None when undefined) and how the interval was made."""

    value: float | None
    low: float | None
    high: float | None
    method: str  # "Wilson" or "bootstrap"


@dataclasses.dataclass(frozen=True)
class DetectorReport:
    """One judge against the truth: counts, precision, recall, accuracy and kappa with their intervals."""

    judge: str
    confusion: Confusion
    precision: Statistic
    recall: Statistic
    accuracy: Statistic
    kappa: Statistic
    unscored: int = 0  # pairs with a truth but no verdict from this judge (left out of the counts)

    def statistic(self, name: str) -> Statistic:
        return getattr(self, name)

    def as_row(self) -> dict:
        """A flat record: judge, n, counts, each statistic with ``<stat>_low`` and ``<stat>_high``."""
        c = self.confusion
        row: dict = {"judge": self.judge, "n": c.n, "tp": c.tp, "fp": c.fp, "fn": c.fn, "tn": c.tn}
        for name in STATISTICS:
            stat = self.statistic(name)
            row[name], row[f"{name}_low"], row[f"{name}_high"] = stat.value, stat.low, stat.high
        row["unscored"] = self.unscored
        return row


def evaluate_detector(
    judge: str,
    truth: Sequence[bool],
    judged: Sequence[bool | None],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> DetectorReport:
    """Precision, recall, accuracy (Wilson intervals) and kappa (bootstrap interval) of ``judged`` against
    ``truth``. Pairs whose judgement is None (the judge gave no verdict) are left out and counted as ``unscored``."""
    pairs = [(t, j) for t, j in zip(truth, judged, strict=True) if j is not None]
    c = Confusion.of([t for t, _ in pairs], [j for _, j in pairs])
    low, high = kappa_interval(pairs, resamples=resamples, seed=seed, confidence=confidence) or (None, None)
    return DetectorReport(
        judge,
        c,
        _proportion(c.tp, c.tp + c.fp, confidence),
        _proportion(c.tp, c.tp + c.fn, confidence),
        _proportion(c.tp + c.tn, c.n, confidence),
        Statistic(cohen_kappa(c), low, high, "bootstrap"),
        unscored=len(truth) - len(pairs),
    )


def _proportion(successes: int, n: int, confidence: float) -> Statistic:
    interval = wilson_interval(successes, n, confidence)
    low, high = interval if interval else (None, None)
    return Statistic(successes / n if n else None, low, high, "Wilson")


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion ``successes / n`` (module docstring); None when n = 0."""
    if n <= 0:
        return None
    z = statistics.NormalDist().inv_cdf((1 + confidence) / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly 0 and 1 at the ends (no rounding error)
    return low, 1.0 if successes == n else min(1.0, centre + half)


def kappa_interval(
    pairs: Sequence[tuple[bool, bool]], *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Percentile-bootstrap interval of Cohen's kappa over ``pairs`` resampled with replacement (the counts of each
    resample from :func:`ragassay.analysis.bootstrap.resample_indices`); None when kappa is undefined in every
    resample or there are no pairs."""
    import numpy as np

    from .bootstrap import counts_of, resample_indices

    n = len(pairs)
    if not n or resamples < 1:
        return None
    truth = np.array([t for t, _ in pairs], dtype=float)
    judged = np.array([j for _, j in pairs], dtype=float)
    cells = np.column_stack([truth * judged, (1 - truth) * judged, truth * (1 - judged), (1 - truth) * (1 - judged)])
    kappas = []
    for index in resample_indices(n, resamples, seed):
        tp, fp, fn, tn = (counts_of(index, n) @ cells).T
        denominator = (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)
        with np.errstate(invalid="ignore", divide="ignore"):
            kappas.append(np.where(denominator > 0, 2 * (tp * tn - fn * fp) / denominator, np.nan))
    values = np.concatenate(kappas)
    values = values[~np.isnan(values)]
    if not len(values):
        return None
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return max(-1.0, float(low)), min(1.0, float(high))


@dataclasses.dataclass
class PPIEstimate:
    """A mean corrected by prediction-powered inference, with the estimates it is compared against."""

    labelled: int  # n: samples with a human label (and a judgement)
    unlabelled: int  # N: samples with a judgement only
    judge_mean: float | None  # the judge's mean over all n + N samples (uncorrected)
    rectifier: float | None  # mean of (judge - truth) on the labelled samples: the judge's measured bias
    estimate: float | None  # PPI: mean of the judge on the unlabelled samples minus the rectifier
    ci: tuple[float, float] | None
    classical: float | None  # the mean of the human labels alone
    classical_ci: tuple[float, float] | None
    clipped_from: float | None = None  # a rate's PPI estimate before it was moved into [0, 1]; None: not moved


def ppi_mean(
    judged_unlabelled: Sequence[float],
    judged_labelled: Sequence[float],
    truth_labelled: Sequence[float],
    *,
    confidence: float = 0.95,
    rate: bool = False,
) -> PPIEstimate:
    """Prediction-powered estimate of the mean of the truth (Angelopoulos et al. 2023, mean estimation).

    With f the judge (1 correct, 0 not, or a score), Y the human label, X~_1..X~_N the unlabelled samples and
    X_1..X_n the labelled ones::

        rectifier  D   = (1/n) sum_i (f(X_i) - Y_i)
        estimate   th  = (1/N) sum_j f(X~_j) - D
        interval   th +- z_(1-a/2) sqrt( s_f^2 / N + s_D^2 / n )

    s_f^2 is the sample variance of f on the unlabelled samples and s_D^2 that of f(X_i) - Y_i on the labelled
    ones (both with n - 1 denominators); z the standard normal quantile. The labelled and unlabelled samples are
    disjoint, as the paper's independence assumption asks. The interval is valid whatever the judge's quality:
    a biased judge is corrected by D, and a noisy one widens the interval. The classical estimate (the labels
    alone) with its normal interval mean(Y) +- z s_Y / sqrt(n) is returned beside it: PPI helps when its
    interval is narrower. Needs n >= 2 and N >= 2 for an interval; fewer gives the point values only.

    With ``rate`` (judge verdicts and labels are 0/1: the estimate is a share of correct answers) both intervals
    stay inside [0, 1]: the PPI interval is intersected with it, and the labels-only interval is Wilson's. The
    PPI estimate does too: one outside [0, 1] is moved to the nearest bound (the projection onto the range, never
    farther from the true share), its value kept in ``clipped_from``; when the whole interval lay beyond that
    bound, the interval is the bound alone.
    """
    if len(judged_labelled) != len(truth_labelled):
        raise ValueError(f"{len(judged_labelled)} labelled judgements but {len(truth_labelled)} labels")
    n, big_n = len(truth_labelled), len(judged_unlabelled)
    z = statistics.NormalDist().inv_cdf((1 + confidence) / 2)
    everything = list(judged_unlabelled) + list(judged_labelled)
    judge_mean = statistics.fmean(everything) if everything else None
    residuals = [f - y for f, y in zip(judged_labelled, truth_labelled)]
    rectifier = statistics.fmean(residuals) if n else None
    estimate = statistics.fmean(judged_unlabelled) - rectifier if big_n and n else None
    ci = None
    if n >= 2 and big_n >= 2:
        half = z * (statistics.variance(judged_unlabelled) / big_n + statistics.variance(residuals) / n) ** 0.5
        ci = (estimate - half, estimate + half)
    clipped_from = None
    if rate and estimate is not None:
        estimate, ci, clipped_from = _inside_unit(estimate, ci)
    classical = statistics.fmean(truth_labelled) if n else None
    classical_ci = None
    if n >= 2 and rate:
        classical_ci = wilson_interval(round(sum(truth_labelled)), n, confidence)
    elif n >= 2:
        half = z * (statistics.variance(truth_labelled) / n) ** 0.5
        classical_ci = (classical - half, classical + half)
    return PPIEstimate(n, big_n, judge_mean, rectifier, estimate, ci, classical, classical_ci, clipped_from)


def _inside_unit(estimate: float, ci: tuple[float, float] | None):
    """A rate's (estimate, interval, value it was moved from or None), each within [0, 1]."""
    inside = min(1.0, max(0.0, estimate))
    if ci is not None:
        low, high = min(max(0.0, ci[0]), inside), max(min(1.0, ci[1]), inside)
        ci = (low, high)
    return inside, ci, None if inside == estimate else estimate


def choose_threshold(
    candidates: Sequence[float],
    truth: Sequence[bool],
    judge_at: Callable[[float], Sequence[bool | None]],
    *,
    criterion: Callable[[Confusion], float | None] = youden_j,
) -> tuple[float, Confusion]:
    """The candidate threshold whose judgements maximise ``criterion`` (default Youden's J) against ``truth``.

    ``judge_at(t)`` gives the judgements at threshold ``t`` (None: no verdict, left out). Ties go to the
    smallest threshold among the best, so the choice does not depend on the order of ``candidates``.
    """
    best: tuple[float, float, Confusion] | None = None
    for threshold in sorted(candidates):
        judged = judge_at(threshold)
        pairs = [(t, j) for t, j in zip(truth, judged, strict=True) if j is not None]
        confusion = Confusion.of([t for t, _ in pairs], [j for _, j in pairs])
        score = criterion(confusion)
        if score is not None and (best is None or score > best[1]):
            best = (threshold, score, confusion)
    if best is None:
        raise ValueError("no candidate threshold gives a defined criterion")
    return best[0], best[2]
