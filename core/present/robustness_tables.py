"""Rendering a :class:`ragassay.analysis.robustness.Profile`: the tables of ``ragassay robustness`` and the HTML
report's robustness section. Rendering only: every number comes from the analysis."""

from __future__ import annotations

from .tables import Column, Table, number_text

TABLES = ("effects", "rates", "ranking", "groups", "across")
EFFECT_NOTES = [
    "effect: perturbed - unperturbed twin on the samples both scored, with the interval of the paired sign-flip "
    "test at its Holm level (one family per twin); worse: the interval excludes 0 on the harmful side",
    "changed: share of the samples the operator changed whose answer differs from the twin's (noise sensitivity)",
]


def interval(low, high, digits: int = 3) -> str:
    """``[low, high]``; an unbounded side as ``-``."""
    if low is None and high is None:
        return "-"
    return f"[{number_text(low, digits)}, {number_text(high, digits)}]"


def profile_tables(profile) -> dict[str, Table]:
    """Every table of the profile by name (:data:`TABLES`); ``rates``, ``groups`` and ``across`` only when there
    is one."""
    tables = {"effects": effects_table(profile)}
    if profile.rates:
        tables["rates"] = rates_table(profile)
    tables["ranking"] = ranking_table(profile)
    if profile.groups:
        tables["groups"] = groups_table(profile)
    if getattr(profile, "across", None):
        tables["across"] = across_table(profile)
    return tables


def effects_table(profile) -> Table:
    """One row per (perturbed system, outcome metric): operator, strength, effect, interval, verdict, changed."""
    changed = {rate.system: rate for rate in profile.noise}
    rows = []
    for effect in profile.effects:
        p = profile.perturbation(effect.system)
        noise = changed.get(effect.system)
        rows.append(
            {
                "system": effect.system,
                "twin": effect.baseline,
                "operator": p.operator,
                "strength": p.strength,
                "metric": effect.metric,
                "n": effect.n,
                "effect": effect.mean_diff,
                "ci_low": effect.ci_low,
                "ci_high": effect.ci_high,
                "verdict": effect.verdict,
                "changed": None if noise is None else noise.mean,
                "changed_n": None if noise is None else noise.n,
            }
        )
    for p in profile.perturbations:
        if p.twin is None:
            rows.append({"system": p.system, "operator": p.operator, "strength": p.strength, "verdict": p.reason})
    columns = [
        Column("system"),
        Column("operator"),
        Column("strength"),
        Column("metric"),
        Column("twin", in_text=False),
        Column("n", numeric=True, in_text=False),
        Column("effect", numeric=True, show=lambda r: _effect(r)),
        Column("ci_low", numeric=True, in_text=False),
        Column("ci_high", numeric=True, in_text=False),
        Column("verdict"),
        Column("changed", numeric=True, digits=2),
        Column("changed_n", numeric=True, in_text=False),
    ]
    notes = list(EFFECT_NOTES)
    changing = getattr(profile, "answer_changing", [])
    if changing:
        notes.append(
            f"{', '.join(changing)}: the perturbation changes the correct answer, so its effect against the original "
            "reference is the changed context being followed, not harm (read counterfactual_following; not ranked)"
        )
    title = "effect of each perturbation against its unperturbed twin"
    return Table(title, columns, rows, notes, id_columns=("system", "metric"))


def _effect(row: dict) -> str:
    if row.get("effect") is None:
        return "-"
    return f"{row['effect']:+.3f} {interval(row.get('ci_low'), row.get('ci_high'))}"


def rates_table(profile) -> Table:
    """The metrics per perturbation of each perturbed system, with their intervals."""
    rows = [
        {
            "system": r.system,
            "metric": r.metric,
            "better": r.direction,
            "mean": r.mean,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "n": r.n,
            "unscored": r.unscored,
        }
        for r in profile.rates
        if r.n
    ]
    columns = [
        Column("system"),
        Column("metric"),
        Column("mean", numeric=True, show=lambda r: f"{number_text(r['mean'])} {interval(r['ci_low'], r['ci_high'])}"),
        Column("ci_low", numeric=True, in_text=False),
        Column("ci_high", numeric=True, in_text=False),
        Column("n", numeric=True),
        Column("better"),
        Column("unscored", numeric=True, in_text=False),
    ]
    notes = ["mean: share of the scored outputs (95% Wilson interval); outputs the metric does not apply to are "]
    notes[0] += "unscored (docs/robustness.md)"
    return Table("metrics per perturbation", columns, rows, notes, id_columns=("system", "metric"))


def ranking_table(profile) -> Table:
    """What breaks each twin most, on the first outcome metric."""
    rows = []
    for twin, effects in profile.ranking.items():
        for rank, effect in enumerate(effects, start=1):
            p = profile.perturbation(effect.system)
            rows.append(
                {
                    "system": twin,
                    "rank": rank,
                    "perturbation": f"{p.operator} ({p.strength})",
                    "effect": effect.mean_diff,
                    "verdict": effect.verdict,
                }
            )
    columns = [Column("system"), Column("rank", numeric=True), Column("perturbation"), Column("effect", numeric=True)]
    columns.append(Column("verdict"))
    metric = profile.metrics[0] if profile.metrics else "-"
    notes = [] if rows else ["no perturbation lowered any system's " + metric]
    return Table(f"what breaks each system most ({metric})", columns, rows, notes, id_columns=("system", "rank"))


def groups_table(profile) -> Table:
    """GRAMMAR: the twin's robust groups under each perturbation."""
    rows = [
        {
            "system": g.system,
            "twin": g.twin,
            "robust": g.robust,
            "stay robust": g.stay_robust,
            "non-robust": g.non_robust,
            "gap": g.gap,
        }
        for g in profile.groups
    ]
    columns = [Column("system"), Column("twin")]
    columns += [Column(k, numeric=True) for k in ("robust", "stay robust", "non-robust", "gap")]
    notes = ["robust: the twin's groups with every phrasing correct; where they go under the perturbation"]
    return Table("do robust groups stay robust? (GRAMMAR groups)", columns, rows, notes, id_columns=("system", "twin"))


def across_table(profile) -> Table:
    """The same perturbation on other systems (e.g. a hardened prompt under injection), each against the first."""
    rows = []
    for effect in profile.across:
        p, first = profile.perturbation(effect.system), profile.perturbation(effect.baseline)
        rows.append(
            {
                "system": effect.system,
                "against": effect.baseline,
                "twins": f"{p.twin} vs {first.twin}",
                "perturbation": f"{p.operator} ({p.strength})",
                "metric": effect.metric,
                "n": effect.n,
                "effect": effect.mean_diff,
                "ci_low": effect.ci_low,
                "ci_high": effect.ci_high,
                "verdict": effect.verdict,
            }
        )
    columns = [
        Column("system"),
        Column("against"),
        Column("twins"),
        Column("perturbation"),
        Column("metric"),
        Column("n", numeric=True, in_text=False),
        Column("effect", numeric=True, show=lambda r: _effect(r)),
        Column("ci_low", numeric=True, in_text=False),
        Column("ci_high", numeric=True, in_text=False),
        Column("verdict"),
    ]
    notes = [
        "the same operator, strength and seed on another system, against the first such system of the run (paired "
        "sign-flip test, Holm over the metrics of one perturbation); better/worse by each metric's direction"
    ]
    keys = ("system", "perturbation", "metric")
    return Table("the same perturbation on other systems", columns, rows, notes, id_columns=keys)
