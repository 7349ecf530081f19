"""Agreement between a judge (or a metric) and people: pure functions over paired observations, each with a
percentile-bootstrap 95% interval from :func:`ragassay.analysis.bootstrap.weighted_statistic_ci`.

Every statistic is written for *weighted* observations (weight w_i = how often a bootstrap resample drew
observation i; the point estimate has every w_i = 1), so one formula gives the estimate and every resample:

- **binary** (h_i the human label, j_i the judge's verdict, 1 = positive): TP = sum w h j, FP = sum w (1 - h) j,
  FN = sum w h (1 - j), TN = sum w (1 - h)(1 - j); precision = TP / (TP + FP), recall = TP / (TP + FN),
  **balanced accuracy** = (recall + TN / (TN + FP)) / 2 (Brodersen et al. 2010, "The balanced accuracy and its
  posterior distribution", ICPR), Cohen's kappa = 2 (TP TN - FN FP) / ((TP + FP)(FP + TN) + (TP + FN)(FN + TN))
  (Cohen 1960, Eq. 1, in its 2x2 form);
- **weighted kappa** over K ordered categories (Cohen 1968, "Weighted kappa", Psychological Bulletin 70, Eq. 6):
  with O_ab the weighted share of pairs (category a by people, b by the judge), E_ab = O_a. O_.b the share chance
  would give, and disagreement weights D_ab = (a - b)^2 (**quadratic**, the default), |a - b| (linear) or
  [a != b] (none: Cohen's unweighted kappa), kappa_w = 1 - sum D O / sum D E. a and b are the categories'
  positions in the rubric's scale, as scikit-learn's ``cohen_kappa_score(labels=scale, weights=...)`` counts them;
- **Pearson's r** = cov_w(x, y) / (sd_w(x) sd_w(y)) (weighted moments; Pearson 1896);
- **Spearman's rho** = Pearson's r of the mid-ranks (ties share the mean of their ranks; Spearman 1904), the
  ranks recomputed within each resample (a value drawn c times takes c consecutive ranks).

A statistic whose denominator is zero (one class only, no variation) is undefined: its value is None with the
reason, never 0 or NaN.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from .bootstrap import weighted_statistic_ci

KAPPA_WEIGHTS = ("quadratic", "linear", "none")


@dataclasses.dataclass(frozen=True)
class Estimate:
    """One statistic with its 95% interval; ``value`` None exactly when ``reason`` says why it is undefined."""

    value: float | None
    low: float | None
    high: float | None
    n: int
    reason: str | None = None


Statistic = Callable[[np.ndarray], np.ndarray]  # (rows, n) weights -> (rows,) values, NaN where undefined


def estimate(
    statistic: Statistic,
    n: int,
    *,
    undefined: str,
    bounds=None,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate:
    """The statistic on the data (all weights 1) and its percentile-bootstrap interval; ``undefined`` is the
    reason given when the statistic has no value on the data."""
    if n == 0:
        return Estimate(None, None, None, 0, "no observations")
    value = float(statistic(np.ones((1, n)))[0])
    if not np.isfinite(value):
        return Estimate(None, None, None, n, undefined)
    interval = weighted_statistic_ci(
        statistic, n, n_resamples=resamples, confidence_level=confidence, seed=seed, bounds=bounds
    )
    low, high = interval if interval else (None, None)
    return Estimate(value, low, high, n)


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


# -- binary ---------------------------------------------------------------------------------------------------


def binary_statistics(human: Sequence[bool], judged: Sequence[bool]) -> dict[str, Statistic]:
    """Precision, recall, balanced accuracy and kappa of ``judged`` against ``human`` as weighted statistics."""
    h, j = np.asarray(human, dtype=float), np.asarray(judged, dtype=float)
    cells = np.column_stack([h * j, (1 - h) * j, h * (1 - j), (1 - h) * (1 - j)])

    def counts(weights: np.ndarray):
        return (weights @ cells).T  # tp, fp, fn, tn, each (rows,)

    def precision(weights):
        tp, fp, _, _ = counts(weights)
        return _divide(tp, tp + fp)

    def recall(weights):
        tp, _, fn, _ = counts(weights)
        return _divide(tp, tp + fn)

    def balanced_accuracy(weights):
        tp, fp, fn, tn = counts(weights)
        return (_divide(tp, tp + fn) + _divide(tn, tn + fp)) / 2

    def kappa(weights):
        tp, fp, fn, tn = counts(weights)
        return _divide(2 * (tp * tn - fn * fp), (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn))

    return {"precision": precision, "recall": recall, "balanced_accuracy": balanced_accuracy, "kappa": kappa}


BINARY_UNDEFINED = {
    "precision": "the judge calls no item positive",
    "recall": "people call no item positive",
    "balanced_accuracy": "people give one class only",
    "kappa": "both give one and the same class only",
}


def binary_agreement(human: Sequence[bool], judged: Sequence[bool], **bootstrap) -> dict[str, Estimate]:
    """Each binary statistic of the module docstring with its interval."""
    n = len(human)
    bounds = {"kappa": (-1.0, 1.0)}
    return {
        name: estimate(f, n, undefined=BINARY_UNDEFINED[name], bounds=bounds.get(name, (0.0, 1.0)), **bootstrap)
        for name, f in binary_statistics(human, judged).items()
    }


# -- ordered categories ---------------------------------------------------------------------------------------


def disagreement_weights(k: int, weights: str = "quadratic") -> np.ndarray:
    """The K x K disagreement weights D of weighted kappa: (a - b)^2, |a - b| or [a != b]."""
    if weights not in KAPPA_WEIGHTS:
        raise ValueError(f"kappa weights must be one of {', '.join(KAPPA_WEIGHTS)}, got {weights!r}")
    a, b = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    return {"quadratic": (a - b) ** 2, "linear": np.abs(a - b), "none": (a != b)}[weights].astype(float)


def weighted_kappa_statistic(first: Sequence, second: Sequence, scale: Sequence, weights: str = "quadratic"):
    """Weighted kappa (module docstring) of two raters' categories from ``scale`` as a weighted statistic."""
    position = {value: i for i, value in enumerate(scale)}
    unknown = sorted({v for v in [*first, *second] if v not in position}, key=str)
    if unknown:
        raise ValueError(f"values {unknown} are not on the scale {list(scale)}")
    k = len(scale)
    cell = np.array([position[a] * k + position[b] for a, b in zip(first, second, strict=True)], dtype=int)
    table = np.zeros((len(cell), k * k))
    table[np.arange(len(cell)), cell] = 1.0
    d = disagreement_weights(k, weights).ravel()

    def kappa(w: np.ndarray) -> np.ndarray:
        observed = (w @ table).reshape(-1, k, k)
        total = observed.sum(axis=(1, 2))
        expected = np.einsum("ra,rb->rab", observed.sum(axis=2), observed.sum(axis=1)) / total[:, None, None]
        disagreement_expected = expected.reshape(-1, k * k) @ d
        return 1 - _divide(observed.reshape(-1, k * k) @ d, disagreement_expected)

    return kappa


def weighted_kappa(first: Sequence, second: Sequence, scale: Sequence, weights: str = "quadratic", **bootstrap):
    """Weighted kappa with its interval (``weights`` quadratic, linear or none)."""
    statistic = weighted_kappa_statistic(first, second, scale, weights)
    return estimate(
        statistic,
        len(first),
        undefined="chance agreement is perfect (one category only)",
        bounds=(-1.0, 1.0),
        **bootstrap,
    )


# -- correlations ---------------------------------------------------------------------------------------------


def _pearson(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weighted Pearson r per row; x and y are (n,) or (rows, n)."""
    total = w.sum(axis=1)
    mx, my = (w * x).sum(axis=1) / total, (w * y).sum(axis=1) / total
    dx, dy = x - mx[:, None], y - my[:, None]
    cov, vx, vy = (w * dx * dy).sum(axis=1), (w * dx * dx).sum(axis=1), (w * dy * dy).sum(axis=1)
    scale = np.sqrt(vx * vy)
    tiny = 1e-12 * np.maximum(1.0, (w * (x * x)).sum(axis=1) * (w * (y * y)).sum(axis=1)) ** 0.5
    return np.clip(_divide(cov, np.where(scale > tiny, scale, 0.0)), -1.0, 1.0)


def _midranks(w: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(rows, n) mid-ranks of each observation within each resample (a value drawn c times holds c ranks)."""
    unique, index = np.unique(values, return_inverse=True)
    per_value = np.zeros((w.shape[0], len(unique)))
    for j in range(len(unique)):
        per_value[:, j] = w[:, index == j].sum(axis=1)
    below = np.cumsum(per_value, axis=1) - per_value
    return (below + (per_value + 1) / 2)[:, index]


def pearson_statistic(x: Sequence[float], y: Sequence[float]) -> Statistic:
    """Pearson's r of (x_i, y_i) as a weighted statistic."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return lambda w: _pearson(w, xs, ys)


def spearman_statistic(x: Sequence[float], y: Sequence[float]) -> Statistic:
    """Spearman's rho (Pearson's r of mid-ranks, ranked within each resample) as a weighted statistic."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return lambda w: _pearson(w, _midranks(w, xs), _midranks(w, ys))


def correlation(x: Sequence[float], y: Sequence[float], method: str = "pearson", **bootstrap) -> Estimate:
    """Pearson's r or Spearman's rho with its interval; undefined when either side does not vary."""
    statistic = {"pearson": pearson_statistic, "spearman": spearman_statistic}[method](x, y)
    return estimate(statistic, len(x), undefined="one side does not vary", bounds=(-1.0, 1.0), **bootstrap)


def clustered(statistic: Statistic, clusters: Sequence) -> tuple[Statistic, int]:
    """Resample clusters rather than observations: the statistic of observations weighted by how often a
    resample drew their cluster (a cluster bootstrap; several people's labels of one item move together).
    Returns the statistic over cluster weights and the number of clusters."""
    names = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
    member = np.array([names[c] for c in clusters], dtype=int)
    return (lambda w: statistic(w[:, member])), len(names)
