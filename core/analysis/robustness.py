"""The robustness profile of a run: what each perturbation does to each system, against its unperturbed twin.

A perturbed system is a system whose rag is ``perturbed`` (docs/robustness.md), or any rag whose options hold an
``operator = { name, options }`` (a plugin's own wrapper under the same contract): it wraps another system's rag
and applies one operator (with its options, the *strength*, and a seed). Its **twin** is the wrapped system, named
in the stored spec (``options.system``), or the run's system whose rag spec equals the wrapped one. Per perturbed
system, pure functions of :class:`ragassay.results.RunData`:

- **the effect** on each outcome metric (a judge or an answer metric): perturbed - twin on the samples both
  scored, with the paired engine (:func:`ragassay.analysis.verdicts.decide_values`: sign-flip permutation test,
  the interval that inverts it, Tarone and Holm over the perturbations of one twin): a "worse" verdict is an
  accuracy drop the samples show, with its interval;
- **noise sensitivity**: the share of samples the operator changed whose answer differs (SQuAD-normalised, citation
  markers ``[n]`` removed) from the twin's answer, with a 95% Wilson score interval (RAGChecker's noise
  sensitivity asks whether a wrong claim comes from an irrelevant chunk, Ru et al. 2024, section 3.3; here the
  twin is the counterfactual run without the perturbation, so a changed answer is caused by it);
- **rates** of the metrics per perturbation (``refusal``, ``counterfactual_following``, ``injection_success``)
  with their 95% Wilson score intervals (a BCa bootstrap interval for a metric that is not 0/1);
- **a ranking** of what breaks each twin most (the largest drops on the first outcome metric), leaving out the
  perturbations that change the correct answer (an ``expected_answer`` in the trace: ``counterfactual``), whose
  drop against the original reference is the context being followed (read ``counterfactual_following``);
- **the same perturbation on other systems** (a defence, e.g. a hardened prompt under ``injection``): perturbed
  systems with the same operator, strength and seed but different twins, each against the first of them in run
  order, with the paired engine on the outcome metrics and the rates (the seeded operator draws the same
  perturbation for every twin, so the comparison is paired);
- for GRAMMAR data (samples with a ``group_id``), **whether robust groups stay robust**: of the twin's robust
  groups (every phrasing correct), how many stay robust, become non-robust or become gaps under the perturbation
  (:mod:`ragassay.analysis.groups`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError, RagassayError
from .verdicts import PairVerdict, decide_values

PERTURBED = "perturbed"  # the rag that applies an operator
RATE_METRICS = ("refusal", "refusal_llm", "counterfactual_following", "injection_success")
RANKED = 3  # perturbations in each twin's ranking


@dataclasses.dataclass(frozen=True)
class Perturbation:
    """A perturbed system of the run: the operator, its strength (options) and seed, and its twin (None: the
    wrapped system is not part of the run, ``reason`` says so)."""

    system: str
    operator: str
    strength: str
    seed: int | None
    twin: str | None
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class Rate:
    """A mean over a perturbed system's outputs (a rate for a 0/1 metric) with its 95% interval (:func:`_rate`)."""

    system: str
    metric: str
    direction: str
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    unscored: int


@dataclasses.dataclass(frozen=True)
class GroupShift:
    """The twin's robust GRAMMAR groups under the perturbation: how many stay robust, turn non-robust or gap."""

    system: str
    twin: str
    robust: int  # robust groups of the twin that the perturbed system answered too
    stay_robust: int
    non_robust: int
    gap: int


@dataclasses.dataclass(frozen=True)
class Profile:
    """The robustness profile of one run (module docstring)."""

    run_id: str
    metrics: list[str]  # outcome metrics the effects are measured on
    alpha: float
    seed: int
    perturbations: list[Perturbation]
    effects: list[PairVerdict]  # one per (perturbed system with a twin, metric); baseline = the twin
    noise: list[Rate]  # metric "answer changed": share of changed samples whose answer changed
    rates: list[Rate]
    ranking: dict[str, list[PairVerdict]]  # twin -> the perturbations that hurt it most (first metric)
    directions: dict[str, str] = dataclasses.field(default_factory=dict)  # outcome metric -> higher | lower
    groups: list[GroupShift] = dataclasses.field(default_factory=list)
    groups_reason: str = ""
    across: list[PairVerdict] = dataclasses.field(default_factory=list)  # same perturbation, other twins
    answer_changing: list[str] = dataclasses.field(default_factory=list)  # perturbed systems with an expected_answer

    def perturbation(self, system: str) -> Perturbation:
        """The perturbation of perturbed ``system``."""
        return next(p for p in self.perturbations if p.system == system)


def perturbations(run) -> list[Perturbation]:
    """The perturbed systems of ``run`` with their operator, strength, seed and twin, in run order."""
    found = []
    for system in run.systems:
        rag = run.system_specs.get(system, {}).get("rag") or {}
        options = rag.get("options") or {}
        operator = options.get("operator")
        if isinstance(operator, str):
            operator = {"name": operator}
        if rag.get("name") != PERTURBED and not (isinstance(operator, dict) and "name" in operator):
            continue
        operator = operator or {}
        twin, reason = _twin(run, system, rag)
        found.append(
            Perturbation(
                system,
                str(operator.get("name", "?")),
                strength(operator.get("options") or {}),
                options.get("seed"),
                twin,
                reason,
            )
        )
    return found


def strength(options: dict) -> str:
    """An operator's options as ``key=value`` pairs in key order, a component reference by its name, unset (None)
    and empty (``[]``, ``{}``) options left out ("default" for none)."""
    shown = [f"{k}={_short(options[k])}" for k in sorted(options) if options[k] not in (None, [], {})]
    return ", ".join(shown) or "default"


def _short(value) -> str:
    if isinstance(value, dict) and "name" in value:
        inner = {k: v for k, v in (value.get("options") or {}).items() if v is not None}
        return f"{value['name']}({strength(inner)})" if inner else str(value["name"])
    return str(value)


def _twin(run, system: str, rag: dict) -> tuple[str | None, str]:
    named = (rag.get("options") or {}).get("system")
    if isinstance(named, str) and named in run.systems and named != system:
        return named, ""
    wrapped = (rag.get("components") or {}).get("rag") or (rag.get("components") or {}).get("system")
    if wrapped:
        for other in run.systems:
            spec = run.system_specs.get(other, {}).get("rag") or {}
            if other != system and _same(spec, wrapped):
                return other, ""
    what = f"'{named}'" if named else "the wrapped rag"
    return None, f"{what} is not a system of this run: add it as a system to compare against it"


def _same(a: dict, b: dict) -> bool:
    return a.get("name") == b.get("name") and a.get("options") == b.get("options")


def outcome_metrics(run, wanted: Sequence[str] | None = None) -> list[str]:
    """The metrics the effects are measured on: ``wanted``, else the stored ``[evaluation] decide`` (less the
    rates), else the first judge, else the first metric that is not a rate."""
    columns = run.columns
    rates = set(rate_columns(run))
    if wanted:
        unknown = [m for m in wanted if m not in columns]
        if unknown:
            raise ConfigError(f"--metric {', '.join(unknown)}: not scored in run {run.id[:12]}; it has {columns}")
        return list(wanted)
    declared = [m for m in ((run.info.config or {}).get("evaluation") or {}).get("decide") or [] if m in columns]
    chosen = [m for m in declared if m not in rates]
    if chosen:
        return chosen
    judges = [c for c in columns if c.startswith("judge:")]
    others = [c for c in columns if c not in rates and not c.startswith("judge:")]
    return (judges or others)[:1]


def rate_columns(run) -> list[str]:
    """The run's metric labels whose metric is one of :data:`RATE_METRICS`."""
    specs = run.info.spec.get("metrics") or {}
    return [label for label in run.metrics if (specs.get(label) or {}).get("name", label) in RATE_METRICS]


def profile(run, *, metrics: Sequence[str] | None = None, alpha: float = 0.05, seed: int = 0) -> Profile:
    """The robustness profile of ``run`` (read with payloads for noise sensitivity and GRAMMAR groups)."""
    found = perturbations(run)
    if not found:
        raise ConfigError(
            f"run {run.id[:12]} has no perturbed system: add systems with rag = 'perturbed' (docs/robustness.md)"
        )
    chosen = outcome_metrics(run, metrics)
    effects = _effects(run, found, chosen, alpha, seed)
    noise = [_noise(run, p, seed) for p in found if p.twin is not None] if run.has_payloads else []
    rates = _rates(run, [p.system for p in found], rate_columns(run), seed)
    groups, reason = _group_shifts(run, found)
    directions = {m: run.direction(m) for m in chosen}
    changing = [p.system for p in found if _changes_answer(run, p.system)]
    ranked = ranking([e for e in effects if e.system not in changing], chosen, directions)
    across = _across(run, found, chosen + rate_columns(run), alpha, seed)
    return Profile(
        run.id, chosen, alpha, seed, found, effects, noise, rates, ranked, directions, groups, reason, across, changing
    )


def _changes_answer(run, system: str) -> bool:
    """Whether the perturbation of ``system`` sets a new correct answer (``expected_answer``) on some output."""
    if not run.has_payloads:
        return False
    for q in run.question_ids:
        output = _answered(run, system, q)
        if output is not None and (output.trace.get("perturbation") or {}).get("expected_answer") is not None:
            return True
    return False


def _effects(run, found: list[Perturbation], metrics: list[str], alpha: float, seed: int) -> list[PairVerdict]:
    """The paired effects, one family per twin (its perturbations x the outcome metrics)."""
    effects: list[PairVerdict] = []
    twins = list(dict.fromkeys(p.twin for p in found if p.twin is not None))
    directions = {m: run.direction(m) for m in metrics}
    for twin in twins:
        systems = [twin] + [p.system for p in found if p.twin == twin]
        values = {(s, m): _scored(run, s, m) for s in systems for m in metrics}
        verdicts = decide_values(
            values,
            systems,
            metrics,
            directions,
            run_id=run.id,
            baseline=twin,
            alpha=alpha,
            seed=seed,
            unscored=run.unscored,
            family=metrics,
            order=run.question_ids,
        )
        effects += verdicts.pairs
    return effects


def _across(run, found: list[Perturbation], metrics: list[str], alpha: float, seed: int) -> list[PairVerdict]:
    """Perturbed systems sharing (operator, strength, seed) with different twins, each against the first of them:
    one family per perturbation, over the metrics the first one scored."""
    groups: dict[tuple, list[Perturbation]] = {}
    for p in found:
        if p.twin is not None:
            groups.setdefault((p.operator, p.strength, p.seed), []).append(p)
    pairs: list[PairVerdict] = []
    for members in groups.values():
        if len({p.twin for p in members}) < 2:
            continue
        systems = [p.system for p in members]
        values = {(s, m): _scored(run, s, m) for s in systems for m in metrics}
        scored = [m for m in metrics if values[(systems[0], m)]]
        if not scored:
            continue
        verdicts = decide_values(
            values,
            systems,
            scored,
            {m: run.direction(m) for m in scored},
            run_id=run.id,
            baseline=systems[0],
            alpha=alpha,
            seed=seed,
            unscored=run.unscored,
            family=scored,
            order=run.question_ids,
        )
        pairs += verdicts.pairs
    return pairs


def _scored(run, system: str, column: str) -> dict[str, float]:
    return {q: float(v) for q, v in zip(run.question_ids, run.values(system, column)) if not math.isnan(v)}


def ranking(effects: list[PairVerdict], metrics: list[str], directions: dict[str, str]) -> dict[str, list]:
    """Per twin, the perturbations with the largest harm on the first metric (harm > 0 only), worst first."""
    if not metrics:
        return {}
    ranked: dict[str, list[PairVerdict]] = {}
    for effect in effects:
        if effect.metric == metrics[0] and harm(effect, directions.get(effect.metric, "higher")) > 0:
            ranked.setdefault(effect.baseline, []).append(effect)
    first = directions.get(metrics[0], "higher")
    return {t: sorted(e, key=lambda x: (-harm(x, first), x.system))[:RANKED] for t, e in ranked.items()}


def harm(effect: PairVerdict, direction: str) -> float:
    """How much worse the perturbed system is than its twin, by the metric's direction (0 when unknown)."""
    if effect.mean_diff is None:
        return 0.0
    return -effect.mean_diff if direction != "lower" else effect.mean_diff


def _noise(run, p: Perturbation, seed: int) -> Rate:
    """Share of the samples the operator changed whose normalised answer differs from the twin's."""
    flags = []
    for q in run.question_ids:
        mine, theirs = _answered(run, p.system, q), _answered(run, p.twin, q)
        if mine is None or theirs is None:
            continue
        if (mine.trace.get("perturbation") or {}).get("changed") is False:
            continue
        flags.append(float(_plain(mine.answer) != _plain(theirs.answer)))
    return _rate(p.system, "answer changed", "lower", np.array(flags, dtype=float), 0, seed)


_CITATION = re.compile(r"\[\s*\d+(?:\s*[,\-–]\s*\d+)*\s*\]")


def _plain(answer: str) -> str:
    """``answer`` SQuAD-normalised, without citation markers ``[n]`` (moving the chunks renumbers the citations of
    the same answer)."""
    from ..text import normalize_answer

    return normalize_answer(_CITATION.sub(" ", answer))


def _answered(run, system: str, question_id: str):
    record = run.output(system, question_id)
    return run.payload(system, question_id) if record is not None and record.ok else None


def _rates(run, systems: list[str], columns: list[str], seed: int) -> list[Rate]:
    rates = []
    for system in systems:
        for column in columns:
            values = run.values(system, column)
            unscored = run.unscored.get((system, column), 0)
            rates.append(_rate(system, column, run.direction(column), values[~np.isnan(values)], unscored, seed))
    return rates


def _rate(system: str, metric: str, direction: str, values: np.ndarray, unscored: int, seed: int) -> Rate:
    """The mean of ``values``: for 0/1 values (a rate) with the Wilson score interval, which stays defined when
    every output agrees (0 of 60 injections obeyed is [0, 0.06], not no interval; Wilson 1927); otherwise with
    the BCa bootstrap interval."""
    from .bootstrap import bootstrap_mean_ci
    from .meta_eval import wilson_interval
    from .verdicts import CONFIDENCE, RESAMPLES

    if not len(values):
        return Rate(system, metric, direction, None, None, None, 0, unscored)
    if np.isin(values, (0.0, 1.0)).all():
        low, high = wilson_interval(int(values.sum()), len(values), CONFIDENCE)
        return Rate(system, metric, direction, float(values.mean()), low, high, len(values), unscored)
    interval = bootstrap_mean_ci(values, n_resamples=RESAMPLES, confidence_level=CONFIDENCE, seed=seed)
    return Rate(system, metric, direction, interval.mean, interval.ci_low, interval.ci_high, len(values), unscored)


def _group_shifts(run, found: list[Perturbation]) -> tuple[list[GroupShift], str]:
    """The twins' robust groups under each perturbation (GRAMMAR data only)."""
    from .groups import GAP, ROBUST, categorize
    from .load import run_outcomes

    if not any(s.group_id is not None for s in run.samples):
        return [], "no sample has a group_id (GRAMMAR data has)"
    if not run.has_payloads:
        return [], "read without payloads"
    try:
        outcomes = run_outcomes(run).outcomes
    except RagassayError as exc:
        return [], str(exc)
    shifts = []
    for p in found:
        if p.twin is None:
            continue
        before, after = categorize(outcomes[p.twin]), categorize(outcomes[p.system])
        robust = [g for g, c in before.items() if c == ROBUST and g in after]
        counts = [sum(after[g] == c for g in robust) for c in (ROBUST, GAP)]
        shifts.append(GroupShift(p.system, p.twin, len(robust), counts[0], len(robust) - sum(counts), counts[1]))
    return shifts, ""
