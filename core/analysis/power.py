"""Statistical power: the smallest difference n samples can detect, and the samples a difference needs.

Two systems scored on the same samples give per-sample differences d_i = b_i - a_i (n pairs, standard deviation
s_d). A two-sided test at level alpha detects a true mean difference delta with probability 1 - beta (the
power). With z_p the standard normal p-quantile, the normal approximation (Cohen 1988, Statistical Power
Analysis for the Behavioral Sciences, 2nd ed., ch. 2: the t test for means, effect size d = delta / sigma,
section 2.3 power, section 2.4 sample size, Case 4 for paired samples) gives::

    paired (one sample of differences):  MDE = (z_{1-alpha/2} + z_{1-beta}) * s_d / sqrt(n)
                                         n   = ceil(((z_{1-alpha/2} + z_{1-beta}) * s_d / delta)^2)
    unpaired (two systems, n samples each, common per-sample SD s):
                                         MDE = (z_{1-alpha/2} + z_{1-beta}) * s * sqrt(2 / n)
                                         n   = ceil(2 * ((z_{1-alpha/2} + z_{1-beta}) * s / delta)^2)

The **exact** figures use the t test's power under the noncentral t distribution (Student's t test, exactly;
``scipy.special.nctdtr``): with df degrees of freedom, noncentrality lambda and t_c = t_{1-alpha/2, df}::

    power = P(T > t_c) + P(T < -t_c),  T ~ nct(df, lambda)
    paired:   df = n - 1,   lambda = (delta / s_d) * sqrt(n)
    unpaired: df = 2n - 2,  lambda = (delta / s) * sqrt(n / 2)

The MDE is then the delta whose power is 1 - beta (solved by bisection to 1e-12), the samples needed
the smallest n whose power reaches 1 - beta. The normal approximation understates both when n is small (for
s_d = 1, delta = 0.5: 32 pairs instead of 34), so every reported figure below :data:`EXACT_BELOW` samples is
the exact one; at and above it the two agree to a fraction of a percent and the closed form is used.

Pairing usually needs far fewer samples than two independent samples: s_d^2 = s_a^2 + s_b^2 - 2 cov(a, b), and
two systems scored on the same questions are positively correlated (hard questions are hard for both).

**Several comparisons**: testing m metrics x systems at level alpha each inflates the chance of a false
"difference". ``comparisons=m`` divides alpha by m (Bonferroni), the level of the first (strictest) step of
Holm's procedure (Holm 1979, A Simple Sequentially Rejective Multiple Test Procedure, Scand. J. Statist. 6),
so the figures are a conservative bound for a Holm-corrected comparison.

A standard deviation of 0 (every difference equal, e.g. a binary metric on which both systems agree on every
sample; within a few units in the last place of the largest value, as rounding leaves it) or fewer than 2 samples
leaves the MDE undefined: it is reported as missing with the reason, never 0 or a rounding residue.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence

from ..errors import ConfigError

DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
EXACT_BELOW = 1000  # sample counts below this use the exact noncentral-t figures
PAIRED, UNPAIRED = "paired", "unpaired"
NO_VARIATION = "no variation observed (every {what} is the same, so the spread and the MDE cannot be estimated)"
TOO_FEW = "fewer than 2 samples (the spread cannot be estimated)"
TOO_FEW_CLUSTERS = "fewer than 2 conversations (the spread between conversations cannot be estimated)"


@dataclasses.dataclass(frozen=True)
class PowerSettings:
    """Test level, wanted power, an optional effect to plan for, and how many comparisons share alpha."""

    alpha: float = DEFAULT_ALPHA
    power: float = DEFAULT_POWER
    effect: float | None = None
    comparisons: int = 1

    @property
    def level(self) -> float:
        """The per-comparison alpha: alpha / comparisons (Bonferroni; Holm's first step)."""
        return self.alpha / self.comparisons


@dataclasses.dataclass(frozen=True)
class PowerEstimate:
    """Power figures of one metric (and one system pair, for the paired design).

    ``mde`` and ``needed`` are None exactly when ``reason`` says why (no variation, too few samples, or no
    effect asked for: then ``needed`` alone is None and ``reason`` stays None). ``method`` is ``"t"`` (exact,
    noncentral t) or ``"normal"`` (the closed form, for large n).
    """

    metric: str
    design: str
    n: int
    sd: float | None
    alpha: float
    power: float
    mde: float | None
    mde_method: str | None
    effect: float | None = None
    needed: int | None = None
    needed_method: str | None = None
    reason: str | None = None
    n_clusters: int | None = None  # conversations holding the n samples (None: independent samples)
    unit_sd: float | None = None  # per-conversation spread the figures use (:mod:`.clustered`; clustered only)
    needed_clusters: int | None = None  # conversations the effect needs (``needed``: the turns they hold)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def check_settings(settings: PowerSettings) -> None:
    """Raise :class:`ConfigError` for an alpha or power outside (0, 1), an effect <= 0 or comparisons < 1."""
    for name, value in (("alpha", settings.alpha), ("power", settings.power)):
        if not 0 < value < 1:
            raise ConfigError(f"--{name} {value} is outside (0, 1); give e.g. --{name} {_default(name)}")
    if settings.effect is not None and not (settings.effect > 0 and math.isfinite(settings.effect)):
        raise ConfigError(
            f"--effect {settings.effect} is not a positive difference; give the smallest difference worth "
            "detecting in the metric's units, e.g. --effect 0.03"
        )
    if settings.comparisons < 1:
        raise ConfigError(f"comparisons must be at least 1, got {settings.comparisons}")


def _default(name: str) -> float:
    return DEFAULT_ALPHA if name == "alpha" else DEFAULT_POWER


def z_sum(alpha: float, power: float) -> float:
    """z_{1-alpha/2} + z_{power}: the multiplier of the standard error in both normal formulas."""
    from statistics import NormalDist  # the standard normal quantile, without importing scipy.stats (0.6 s)

    z = NormalDist().inv_cdf
    return float(z(1 - alpha / 2) + z(power))


def _scale(design: str, n: float) -> float:
    """Standard error of the compared mean difference per unit of SD: 1/sqrt(n) paired, sqrt(2/n) unpaired."""
    return math.sqrt((1 if design == PAIRED else 2) / n)


def normal_mde(sd: float, n: int, alpha: float, power: float, design: str = PAIRED) -> float:
    """MDE by the normal approximation (module docstring)."""
    return z_sum(alpha, power) * sd * _scale(design, n)


def normal_samples(sd: float, effect: float, alpha: float, power: float, design: str = PAIRED) -> int:
    """Samples (pairs, or per system for ``unpaired``) by the normal approximation, at least 2."""
    factor = 1 if design == PAIRED else 2
    return max(2, math.ceil(factor * (z_sum(alpha, power) * sd / effect) ** 2 - 1e-9))


def t_power(effect: float, sd: float, n: int, alpha: float, design: str = PAIRED) -> float:
    """Exact power of the two-sided t test (paired: one-sample t of the differences; unpaired: Student's
    two-sample t with n per group) for a true difference ``effect`` and per-sample SD ``sd``."""
    from scipy.special import nctdtr, stdtrit  # what scipy.stats' t.ppf and nct.cdf call, without its import

    df = n - 1 if design == PAIRED else 2 * n - 2
    noncentrality = effect / (sd * _scale(design, n))
    critical = float(stdtrit(df, 1 - alpha / 2))
    # P(T < -t_c | lambda) = P(T > t_c | -lambda): the noncentral t's cdf returns NaN far in that tail (df = 1)
    upper = 1.0 - nctdtr(df, noncentrality, critical)
    lower = 1.0 - nctdtr(df, -noncentrality, critical)
    return float(min(1.0, max(0.0, upper)) + min(1.0, max(0.0, lower)))


def t_mde(sd: float, n: int, alpha: float, power: float, design: str = PAIRED) -> float:
    """The difference whose exact t-test power is ``power`` with ``n`` samples (solved by bisection)."""
    high = normal_mde(1.0, n, alpha, power, design)
    while t_power(high, 1.0, n, alpha, design) < power:
        high *= 2
    low = 0.0  # the power grows with the difference: bisect to 1e-12 (as scipy's brentq with xtol=1e-12 did)
    while high - low > 1e-12:
        middle = (low + high) / 2
        if t_power(middle, 1.0, n, alpha, design) < power:
            low = middle
        else:
            high = middle
    return (low + high) / 2 * sd


def t_samples(sd: float, effect: float, alpha: float, power: float, design: str = PAIRED) -> int:
    """The smallest n (at least 2) whose exact t-test power for ``effect`` reaches ``power``."""
    n = normal_samples(sd, effect, alpha, power, design)
    while t_power(effect, sd, n, alpha, design) < power:
        n += 1
    while n > 2 and t_power(effect, sd, n - 1, alpha, design) >= power:
        n -= 1
    return n


def mde(sd: float, n: int, alpha: float, power: float, design: str = PAIRED) -> tuple[float, str]:
    """(MDE, method): exact below :data:`EXACT_BELOW` samples, the normal approximation from there on."""
    if n < EXACT_BELOW:
        return t_mde(sd, n, alpha, power, design), "t"
    return normal_mde(sd, n, alpha, power, design), "normal"


def samples_needed(sd: float, effect: float, alpha: float, power: float, design: str = PAIRED) -> tuple[int, str]:
    """(samples, method): the normal figure when it is at least :data:`EXACT_BELOW`, else the exact one."""
    approx = normal_samples(sd, effect, alpha, power, design)
    if approx >= EXACT_BELOW:
        return approx, "normal"
    return t_samples(sd, effect, alpha, power, design), "t"


def estimate(
    metric: str, values: Sequence[float], design: str, settings: PowerSettings, clusters: Sequence[str] | None = None
) -> PowerEstimate:
    """Power figures from per-sample ``values``: the differences (paired) or one system's scores (unpaired);
    ``clusters``: each value's conversation, when the samples are turns (then :func:`clustered_estimate`)."""
    if clusters is not None and len(set(clusters)) < len(clusters):
        return clustered_estimate(metric, values, design, settings, clusters)
    check_settings(settings)
    n = len(values)
    base = {"metric": metric, "design": design, "n": n, "alpha": settings.level, "power": settings.power}
    base["effect"] = settings.effect
    if n < 2:
        return PowerEstimate(**base, sd=None, mde=None, mde_method=None, reason=TOO_FEW)
    if no_variation(values):
        what = "difference" if design == PAIRED else "value"
        return PowerEstimate(**base, sd=0.0, mde=None, mde_method=None, reason=NO_VARIATION.format(what=what))
    sd = statistics.stdev(values)
    detectable, method = mde(sd, n, settings.level, settings.power, design)
    needed = needed_method = None
    if settings.effect is not None:
        needed, needed_method = samples_needed(sd, settings.effect, settings.level, settings.power, design)
    return PowerEstimate(**base, sd=sd, mde=detectable, mde_method=method, needed=needed, needed_method=needed_method)


def clustered_estimate(
    metric: str, values: Sequence[float], design: str, settings: PowerSettings, clusters: Sequence[str]
) -> PowerEstimate:
    """Power figures for turns of conversations: the t-test figures over the M conversations with the
    per-conversation spread s_unit of the turn-weighted mean (:func:`ragassay.analysis.clustered.unit_spread`,
    Cameron & Miller 2015 section II.C), so ``mde`` is what M more conversations like these detect; ``needed_clusters``
    the conversations an effect needs and ``needed`` the turns they hold at the observed turns per conversation.
    This assumes future conversations are like the observed ones in length and in how alike their turns are."""
    import numpy as np

    from .clustered import clusters_of, unit_spread

    check_settings(settings)
    x = np.asarray(values, dtype=np.float64)
    units = clusters_of(list(clusters))
    unit_sd, m = unit_spread(x, units.codes)
    n = len(x)
    base = {"metric": metric, "design": design, "n": n, "alpha": settings.level, "power": settings.power}
    base |= {"effect": settings.effect, "n_clusters": m}
    if m < 2:
        return PowerEstimate(**base, sd=None, mde=None, mde_method=None, reason=TOO_FEW_CLUSTERS)
    sd = statistics.stdev(values)
    if unit_sd is None:
        what = "difference" if design == PAIRED else "value"
        return PowerEstimate(**base, sd=sd, mde=None, mde_method=None, reason=NO_VARIATION.format(what=what))
    detectable, method = mde(unit_sd, m, settings.level, settings.power, design)
    needed = needed_clusters = needed_method = None
    if settings.effect is not None:
        needed_clusters, needed_method = samples_needed(
            unit_sd, settings.effect, settings.level, settings.power, design
        )
        needed = math.ceil(needed_clusters * n / m)
    return PowerEstimate(
        **base,
        sd=sd,
        mde=detectable,
        mde_method=method,
        needed=needed,
        needed_method=needed_method,
        unit_sd=unit_sd,
        needed_clusters=needed_clusters,
    )


def no_variation(values: Sequence[float]) -> bool:
    """Whether ``values`` spread no more than rounding (:func:`ragassay.analysis.paired.no_variation`)."""
    import numpy as np

    from .paired import no_variation as within_rounding

    return within_rounding(np.asarray(values, dtype=np.float64))


def paired_power(
    metric: str,
    a: Mapping[str, float],
    b: Mapping[str, float],
    settings: PowerSettings,
    clusters: Mapping[str, str] | None = None,
) -> PowerEstimate:
    """Paired figures of ``b`` against ``a`` (question_id -> value) on the samples both scored; ``clusters``:
    question_id -> conversation, when the samples are turns."""
    ids = sorted(set(a) & set(b))
    return estimate(metric, [b[q] - a[q] for q in ids], PAIRED, settings, _labels(ids, clusters))


def unpaired_power(
    metric: str, values: Mapping[str, float], settings: PowerSettings, clusters: Mapping[str, str] | None = None
) -> PowerEstimate:
    """Figures for comparing a future system with this one on independent samples (no pair yet)."""
    ids = sorted(values)
    return estimate(metric, [values[q] for q in ids], UNPAIRED, settings, _labels(ids, clusters))


def _labels(ids: Sequence[str], clusters: Mapping[str, str] | None) -> list[str] | None:
    return None if clusters is None else [clusters.get(q, q) for q in ids]


@dataclasses.dataclass(frozen=True)
class PlanRow:
    """One row of ``ragassay plan``: ``system`` against ``baseline`` (paired), or ``system`` alone (unpaired)."""

    system: str
    baseline: str | None
    estimate: PowerEstimate


def plan(
    values: Mapping[tuple[str, str], Mapping[str, float]],
    systems: Sequence[str],
    metrics: Sequence[str],
    settings: PowerSettings,
    baseline: str | None = None,
    clusters: Mapping[str, str] | None = None,
) -> list[PlanRow]:
    """Power figures of a run: each metric x each system against ``baseline`` (default: the first system) on
    the samples both scored; with one system, the unpaired figures of that system.

    ``values`` is (system, metric) -> {question_id: value} (scored values only).
    ``settings.comparisons`` is used as given (set it to len(result) for a Bonferroni bound: :func:`comparisons`).
    ``clusters`` (question_id -> conversation) makes the figures count conversations (:func:`clustered_estimate`).
    """
    check_settings(settings)
    if not systems:
        raise ConfigError("the run has no system to plan for")
    baseline = systems[0] if baseline is None else baseline
    if baseline not in systems:
        raise ConfigError(f"--baseline '{baseline}' is not a system of the run. Its systems: {', '.join(systems)}")
    rows = []
    for metric in metrics:
        if len(systems) == 1:
            alone = unpaired_power(metric, values.get((baseline, metric), {}), settings, clusters)
            rows.append(PlanRow(baseline, None, alone))
            continue
        for system in systems:
            if system != baseline:
                a, b = values.get((baseline, metric), {}), values.get((system, metric), {})
                rows.append(PlanRow(system, baseline, paired_power(metric, a, b, settings, clusters)))
    return rows


def comparisons(systems: Sequence[str], metrics: Sequence[str]) -> int:
    """How many comparisons :func:`plan` makes: metrics x (systems - 1), or metrics for a single system."""
    return len(metrics) * max(1, len(systems) - 1)


def most_constrained(rows: Sequence[PlanRow]) -> PlanRow | None:
    """The row needing the most samples for the effect (when one was given), else the one with the largest MDE;
    ties go to the first row. None when no row has a figure."""
    with_needed = [r for r in rows if r.estimate.needed is not None]
    if with_needed:
        return max(with_needed, key=lambda r: r.estimate.needed)
    with_mde = [r for r in rows if r.estimate.mde is not None]
    return max(with_mde, key=lambda r: r.estimate.mde) if with_mde else None
