"""Prediction-powered inference (PPI) for decisions: a judge's scores on every item, corrected by people's labels on
a subset, give an estimate and an interval that stay valid however wrong the judge is.

Two estimators of a mean E[Y] (Y a person's label of an item: 0/1 correct, an ordinal grade, a paired difference
y_B - y_A, or a preference of B over A), with f the judge's prediction of Y on every item:

- :func:`ppi_mean`, a labelled subset drawn uniformly at random (PPI++: Angelopoulos, Duchi, Zrnic, "PPI++:
  Efficient prediction-powered inference", arXiv:2311.01453, 2023, eq. (2) and Example 6.1 for the mean; with
  lambda = 1 it is PPI of Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, Science 382, 2023)::

      theta    = lambda (1/N) sum_j f(X~_j)  +  (1/n) sum_i ( Y_i - lambda f(X_i) )
      se^2     = lambda^2 sd_N(f)^2 / N  +  sd_n(Y - lambda f)^2 / n
      lambda   = cov_n(Y, f) / ( (1 + n/N) var_{n+N}(f) ),  clipped to [0, 1]

  the labelled X_1..X_n and unlabelled X~_1..X~_N disjoint; sd_N and sd_n population standard deviations (1/N,
  1/n), cov_n with 1/n, var_{n+N} of the judge over all items with n + N - 1 (exactly the published ``ppi_py``
  code, which a test runs on the same data). lambda = 0 is the labels alone, lambda = 1 plain PPI; the tuned
  lambda is never worse than either asymptotically.
- :func:`ppi_active_mean`, labels drawn item by item with known probabilities pi_i (active statistical inference:
  Zrnic and Candes, "Active statistical inference", ICML 2024, eq. (3), with the power tuning of their section
  3)::

      theta  = (1/N) sum_i [ lambda f(X_i) + ( Y_i - lambda f(X_i) ) xi_i / pi_i ]      xi_i = 1 if labelled
      se^2   = var( the N terms ) / N

  unbiased for any pi with pi_i > 0; pi_i larger where the judge is less certain narrows the interval. Its
  labels-only estimate is the same at lambda = 0 (each label weighted by 1 / pi_i).

Both give the interval theta +- z se and the two-sided p-value of theta = ``null`` from the same z, so a verdict
read off the test and off the interval always agree. Beside each estimate the result keeps what the judge alone
would have said (its mean over all items with the normal interval, as if it were right) and what the labels alone
give, so a report can show both.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from statistics import NormalDist

LAMBDA_RANGE = (0.0, 1.0)


@dataclasses.dataclass(frozen=True)
class MeanInterval:
    """A mean with its normal-approximation interval: ``mean +- z std_error``."""

    mean: float
    low: float
    high: float
    std_error: float
    n: int

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclasses.dataclass(frozen=True)
class PPIResult:
    """A prediction-powered estimate, its interval and test, and the estimates it is compared against."""

    estimate: float
    low: float
    high: float
    std_error: float
    p_value: float  # two-sided, of estimate == null, from the same z as the interval
    null: float
    lam: float  # the power-tuning weight used (1: plain PPI, 0: the labels alone)
    labelled: int
    unlabelled: int
    confidence: float
    judge_only: MeanInterval  # the judge's mean over every item, as if it were right
    labels_only: MeanInterval | None  # the labels alone (None with fewer than 2)

    @property
    def width(self) -> float:
        return self.high - self.low

    def as_dict(self) -> dict:
        """Plain JSON-able values (the two comparison estimates as nested dicts)."""
        return dataclasses.asdict(self)


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _pvar(values: Sequence[float]) -> float:
    """Population variance (1/n)."""
    m = _mean(values)
    return math.fsum((v - m) ** 2 for v in values) / len(values)


def mean_interval(values: Sequence[float], confidence: float = 0.95, *, ddof: int = 1) -> MeanInterval | None:
    """The mean of ``values`` with its normal interval (standard error from the sample variance); None below 2."""
    n = len(values)
    if n < 2:
        return None
    se = math.sqrt(_pvar(values) * n / (n - ddof) / n)
    m, half = _mean(values), _z(confidence) * se
    return MeanInterval(m, m - half, m + half, se, n)


def tuned_lambda(truth: Sequence[float], judged_labelled: Sequence[float], judged_unlabelled: Sequence[float]) -> float:
    """PPI++'s variance-minimising lambda for a mean (arXiv:2311.01453, Example 6.1), clipped to [0, 1]; 0 when
    the judge does not vary (it then carries no information)."""
    n, big_n = len(truth), len(judged_unlabelled)
    my, mf = _mean(truth), _mean(judged_labelled)
    cov = math.fsum((y - my) * (f - mf) for y, f in zip(truth, judged_labelled, strict=True)) / n
    every = [*judged_labelled, *judged_unlabelled]
    var_f = _pvar(every) * len(every) / (len(every) - 1)
    if var_f <= 0:
        return 0.0
    return min(max(cov / ((1 + n / big_n) * var_f), LAMBDA_RANGE[0]), LAMBDA_RANGE[1])


def _result(estimate, se, null, lam, n, big_n, confidence, judge_only, labels_only) -> PPIResult:
    z = _z(confidence)
    if se > 0:
        p = 2 * (1 - NormalDist().cdf(abs(estimate - null) / se))
    else:
        p = 1.0 if estimate == null else 0.0
    return PPIResult(
        estimate, estimate - z * se, estimate + z * se, se, p, null, lam, n, big_n, confidence, judge_only, labels_only
    )


def ppi_mean(
    truth: Sequence[float],
    judged_labelled: Sequence[float],
    judged_unlabelled: Sequence[float],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
    null: float = 0.0,
) -> PPIResult:
    """The PPI++ estimate of E[Y] from a uniformly drawn labelled subset (module docstring).

    ``truth[i]`` is the person's label of labelled item i and ``judged_labelled[i]`` the judge's score of the same
    item; ``judged_unlabelled`` the judge's scores of the other items. ``lam`` None tunes lambda; 1 is plain PPI.
    Needs at least 2 labelled and 2 unlabelled items.
    """
    n, big_n = len(truth), len(judged_unlabelled)
    if len(judged_labelled) != n:
        raise ValueError(f"{n} labels but {len(judged_labelled)} judge scores of the labelled items")
    if n < 2 or big_n < 2:
        raise ValueError(f"PPI needs at least 2 labelled and 2 unlabelled items, got {n} and {big_n}")
    lam = tuned_lambda(truth, judged_labelled, judged_unlabelled) if lam is None else float(lam)
    residual = [y - lam * f for y, f in zip(truth, judged_labelled, strict=True)]
    estimate = lam * _mean(judged_unlabelled) + _mean(residual)
    se = math.sqrt(lam * lam * _pvar(judged_unlabelled) / big_n + _pvar(residual) / n)
    judge_only = mean_interval([*judged_labelled, *judged_unlabelled], confidence)
    return _result(estimate, se, null, lam, n, big_n, confidence, judge_only, mean_interval(truth, confidence))


def active_lambda(judged: Sequence[float], truth: Sequence[float | None], probabilities: Sequence[float]) -> float:
    """The lambda minimising the variance of the active estimator's terms (Zrnic and Candes 2024, section 3):
    lambda = Cov(Y xi/pi, f (xi/pi - 1)) / Var(f (xi/pi - 1)) estimated from the items, clipped to [0, 1]."""
    a = [(y or 0.0) * (y is not None) / p for y, p in zip(truth, probabilities, strict=True)]
    b = [f * ((y is not None) / p - 1) for f, y, p in zip(judged, truth, probabilities, strict=True)]
    ma, mb = _mean(a), _mean(b)
    var_b = math.fsum((v - mb) ** 2 for v in b)
    if var_b <= 0:
        return 0.0
    cov = math.fsum((x - ma) * (v - mb) for x, v in zip(a, b, strict=True))
    return min(max(cov / var_b, LAMBDA_RANGE[0]), LAMBDA_RANGE[1])


def ppi_active_mean(
    judged: Sequence[float],
    truth: Sequence[float | None],
    probabilities: Sequence[float],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
    null: float = 0.0,
) -> PPIResult:
    """The active-inference estimate of E[Y] (module docstring): ``judged[i]`` the judge's score of item i,
    ``truth[i]`` its label or None when it was not labelled, ``probabilities[i]`` the probability with which it
    was to be labelled (known, in (0, 1]). ``lam`` None tunes lambda; 1 is the plain estimator."""
    big_n = len(judged)
    if not len(truth) == len(probabilities) == big_n:
        raise ValueError(f"{big_n} judge scores, {len(truth)} labels and {len(probabilities)} probabilities")
    if any(not 0.0 < p <= 1.0 for p in probabilities):
        raise ValueError("every labelling probability must lie in (0, 1]")
    labelled = [y for y in truth if y is not None]
    if len(labelled) < 2 or big_n < 2:
        raise ValueError(f"active PPI needs at least 2 labelled items of at least 2, got {len(labelled)} of {big_n}")
    lam = active_lambda(judged, truth, probabilities) if lam is None else float(lam)
    terms = [
        lam * f + ((y - lam * f) / p if y is not None else 0.0)
        for f, y, p in zip(judged, truth, probabilities, strict=True)
    ]
    estimate = _mean(terms)
    se = math.sqrt(_pvar(terms) * big_n / (big_n - 1) / big_n)
    judge_only = mean_interval(list(judged), confidence)
    return _result(
        estimate, se, null, lam, len(labelled), big_n - len(labelled), confidence, judge_only,
        _weighted_labels(truth, probabilities, confidence, len(labelled)),
    )  # fmt: skip


def _weighted_labels(truth, probabilities, confidence: float, n: int) -> MeanInterval | None:
    """The labels alone under an active draw: the estimator at lambda = 0, each label weighted by 1 / pi (the
    plain mean of actively drawn labels is biased towards the items the judge was unsure of)."""
    found = mean_interval([0.0 if y is None else y / p for y, p in zip(truth, probabilities, strict=True)], confidence)
    return None if found is None else dataclasses.replace(found, n=n)


def ppi_std_error(sd_truth: float, sd_judge: float, correlation: float, labelled: int, unlabelled: int) -> float:
    """The standard error PPI++ reaches with ``labelled`` labels and ``unlabelled`` judged-only items, from the
    spreads of labels and judge and their correlation (the tuned lambda at its population value)."""
    n, big_n = labelled, unlabelled
    cov = correlation * sd_truth * sd_judge
    lam = 0.0 if sd_judge == 0 else min(max(cov / ((1 + n / big_n) * sd_judge**2), 0.0), 1.0)
    var = (sd_truth**2 - 2 * lam * cov + lam * lam * sd_judge**2) / n + lam * lam * sd_judge**2 / big_n
    return math.sqrt(max(var, 0.0))


def labels_needed(
    sd_truth: float,
    sd_judge: float,
    correlation: float,
    items: int,
    half_width: float,
    confidence: float = 0.95,
) -> int | None:
    """The fewest labels (of ``items`` in all, the rest judged only) for which PPI++'s interval is at most
    ``half_width`` either side (:func:`ppi_std_error`); None when even labelling all but 2 items is not enough."""
    if half_width <= 0:
        raise ValueError(f"half_width must be positive, got {half_width}")
    z = _z(confidence)

    def enough(n: int) -> bool:
        return z * ppi_std_error(sd_truth, sd_judge, correlation, n, items - n) <= half_width

    low, high = 2, items - 2
    if high < low or not enough(high):
        return None
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid + 1, high)
    return low
