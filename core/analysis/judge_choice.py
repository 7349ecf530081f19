"""The cheapest judge you can trust: judge configurations scored on the same labelled items, compared by their
agreement with people (with intervals) and their cost per item, and the cheapest one that is non-inferior in
agreement to the best at a stated margin.

A *configuration* is one judge of the run (``judges`` / ``judge:LABEL``: a model, a reasoning effort or thinking
budget, a prompt version, exemplars) or a metric read as a judge (``NAME:THRESHOLD``), all scored on the outputs
people labelled. Agreement with people on the rubric:

- **binary** rubrics: an item's truth is the majority of its labels (ties left out); the configuration's verdict
  (``correct``/``incorrect``, or score >= the threshold) against it: **Cohen's kappa** (:mod:`.agreement`);
- **ordinal** rubrics: each person's label is one observation against the score put on the rubric's scale
  (:func:`.meta_eval_people.on_scale`): **quadratic-weighted kappa** (default) or **Spearman's rho**, the labels of
  one item resampled together (a cluster bootstrap over items).

Every configuration is measured on the *same* items: those with a truth that every configuration scored (an item
one of them left unscored is dropped for all, and counted). The **best** configuration has the highest agreement.
A configuration is **non-inferior** to it at margin ``m`` when the paired bootstrap interval of the difference
(its agreement minus the best's, both computed on each resample of the same items) has its lower bound above
``-m``: the two-sided ``confidence`` interval, so the one-sided test is at (1 - confidence) / 2 (the confidence-
interval approach to non-inferiority, Piaggio et al. 2012, CONSORT extension, Figure 1; Wellek 2010, section 1.6).
The **chosen** configuration is the non-inferior one with the lowest cost per item (cost unknown counts as
dearer than any priced one; ties: higher agreement, then name).

Cost per item: the configuration's stored own usage (:attr:`ragassay.results.ScoreRecord.usage`) over every item
it scored (repeat 0), at list prices: a reply served from the response cache counts as if the call was made.
Calls, tokens and reasoning tokens per item come with it. Latency is not stored per judgement, so none is given.
"""

from __future__ import annotations

import dataclasses
import statistics as stats

import numpy as np

from ..errors import ConfigError
from .agreement import Estimate, binary_statistics, clustered, estimate, spearman_statistic, weighted_kappa_statistic
from .human_labels import HumanLabel, Rubric, latest
from .meta_eval_people import candidate_scores, on_scale, verdict_of

STATISTICS = {"binary": ("kappa",), "ordinal": ("weighted_kappa_quadratic", "spearman")}


@dataclasses.dataclass(frozen=True)
class Spend:
    """What a configuration spent per item it scored (its own model calls, at list prices)."""

    items: int
    cost_usd: float | None  # None when a model it used has no price
    calls: float
    input_tokens: float
    output_tokens: float
    reasoning_tokens: float
    unpriced: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class JudgeOption:
    """One configuration: its agreement with people, the paired difference to the best, what it spends."""

    name: str
    identities: tuple[str, ...]  # the judge ids its stored judgements carry
    agreement: Estimate
    difference: Estimate  # agreement minus the best's, paired bootstrap on the same items
    non_inferior: bool
    spend: Spend

    def as_row(self) -> dict:
        a, d, s = self.agreement, self.difference, self.spend
        return {
            "judge": self.name,
            "agreement": a.value,
            "agreement_low": a.low,
            "agreement_high": a.high,
            "difference": d.value,
            "difference_low": d.low,
            "difference_high": d.high,
            "non_inferior": self.non_inferior,
            "cost_per_item_usd": s.cost_usd,
            "calls_per_item": s.calls,
            "tokens_per_item": s.input_tokens + s.output_tokens,
            "reasoning_tokens_per_item": s.reasoning_tokens,
            "identity": ", ".join(self.identities),
        }


@dataclasses.dataclass(frozen=True)
class JudgeChoice:
    """The comparison: the statistic, the items, the margin, every option, the best and the chosen one."""

    run_id: str
    rubric: str
    statistic: str
    margin: float
    confidence: float
    items: int
    best: str
    chosen: str
    options: list[JudgeOption]
    notes: list[str]


def choose_judge(
    run,
    labels: list[HumanLabel],
    rubric: Rubric,
    *,
    judges=(),
    metrics=(),
    margin: float = 0.05,
    statistic: str | None = None,
    judge_threshold: float = 0.5,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> JudgeChoice:
    """Compare the configurations (``judges`` and ``metrics`` of ``run``, default every judge) on the ``labels`` of
    ``rubric`` for this run and choose the cheapest non-inferior one (module docstring)."""
    statistic = _statistic(rubric, statistic)
    mine = [label for label in latest(labels) if label.run_id == run.id and label.rubric == rubric.name]
    if not mine:
        raise ConfigError(
            f"no item of run {run.id[:12]} is labelled on rubric '{rubric.name}': label some outputs first "
            f"(ragassay label {run.id[:12]} --rubric {rubric.name}, or ragassay labels import FILE)"
        )
    scores = candidate_scores(run, judges, metrics)
    if len(scores) < 2:
        raise ConfigError(
            f"run {run.id[:12]} has one judge configuration only ({', '.join(scores)}): nothing to compare"
        )
    notes: list[str] = []
    observed = _observations(rubric, mine, scores, judge_threshold, notes)
    boot = {"resamples": resamples, "seed": seed, "confidence": confidence}
    weighted = {name: (rubric, statistic, judged) for name, judged in observed.judged.items()}
    agreements = {name: _estimate(f, observed, boot) for name, f in weighted.items()}
    defined = {n: a for n, a in agreements.items() if a.value is not None}
    if not defined:
        raise ConfigError(f"no configuration's {statistic} is defined on the labelled items: {_reasons(agreements)}")
    best = max(sorted(defined), key=lambda n: defined[n].value)
    options = []
    for name in scores:
        diff = _difference(weighted[name], weighted[best], observed, boot) if name != best else _zero(observed)
        ok = name == best or (diff.low is not None and diff.low > -margin)
        options.append(JudgeOption(name, _identities(run, name), agreements[name], diff, ok, _spend(run, name)))
    chosen = min((o for o in options if o.non_inferior), key=_cheapness).name
    notes += [
        f"{o.name}: cost unknown, no price for {', '.join(o.spend.unpriced)}" for o in options if o.spend.unpriced
    ]
    return JudgeChoice(run.id, rubric.name, statistic, margin, confidence, observed.items, best, chosen, options, notes)


def _statistic(rubric: Rubric, statistic: str | None) -> str:
    allowed = STATISTICS.get(rubric.kind)
    if allowed is None:
        raise ConfigError(f"rubric '{rubric.name}' is {rubric.kind}: judges choose reads binary and ordinal rubrics")
    if statistic is None:
        return allowed[0]
    if statistic not in allowed:
        raise ConfigError(f"--statistic {statistic} does not apply to a {rubric.kind} rubric; use {', '.join(allowed)}")
    return statistic


@dataclasses.dataclass
class _Observed:
    """The observations every configuration shares: people's values, clusters (items), each one's judged values."""

    human: list[float]
    clusters: list
    judged: dict[str, list[float]]
    items: int


def _observations(rubric: Rubric, labels: list[HumanLabel], scores: dict, threshold: float, notes: list) -> _Observed:
    """Binary: one observation per item (the majority label); ordinal: one per label. Only items every
    configuration scored."""
    per_item: dict = {}
    for label in labels:
        per_item.setdefault(label.item, []).append(label.value)
    if rubric.kind == "binary":
        shares = {item: stats.fmean(values) for item, values in per_item.items()}
        ties = [item for item, share in shares.items() if share == 0.5]
        if ties:
            notes.append(f"{len(ties)} items whose labels are tied are left out")
        per_item = {item: [float(share > 0.5)] for item, share in shares.items() if share != 0.5}

    def value(name: str, pairs: dict, item) -> float | None:
        pair = pairs.get(item)
        if pair is None:
            return None
        if rubric.kind == "binary":
            verdict = verdict_of(pair, name, threshold)
            return None if verdict is None else float(verdict)
        return pair[0]

    judged_items = {name: {item: value(name, pairs, item) for item in per_item} for name, pairs in scores.items()}
    common = [item for item in sorted(per_item) if all(j[item] is not None for j in judged_items.values())]
    dropped = len(per_item) - len(common)
    if dropped:
        missing = {n: sum(v is None for v in j.values()) for n, j in judged_items.items()}
        which = ", ".join(f"{n} {k}" for n, k in missing.items() if k)
        notes.append(f"{dropped} labelled items left out: not scored by every configuration (unscored: {which})")
    if not common:
        raise ConfigError("no labelled item is scored by every configuration: nothing to compare on")
    human = [v for item in common for v in per_item[item]]
    clusters = [item for item in common for _ in per_item[item]]
    judged = {n: [j[item] for item in common for _ in per_item[item]] for n, j in judged_items.items()}
    return _Observed(human, clusters, judged, len(common))


def _bind(spec, observed: _Observed):
    """The configuration's statistic (``spec``: rubric, statistic, its judged values) as a function of item
    (cluster) weights; None when its scores cannot be put on the rubric's scale."""
    rubric, statistic, judged = spec
    if statistic == "kappa":
        f = binary_statistics([h > 0.5 for h in observed.human], [j > 0.5 for j in judged])["kappa"]
    elif statistic == "spearman":
        f = spearman_statistic(judged, observed.human)
    else:
        placed = on_scale(judged, rubric.values)
        if placed is None:
            return None
        f = weighted_kappa_statistic(observed.human, placed, rubric.values)
    return clustered(f, observed.clusters)[0]


def _estimate(spec, observed: _Observed, boot: dict) -> Estimate:
    f = _bind(spec, observed)
    if f is None:
        return Estimate(None, None, None, observed.items, "scores neither on the rubric's scale nor in [0, 1]")
    return estimate(f, observed.items, undefined="one class or category only", bounds=(-1.0, 1.0), **boot)


def _difference(spec, best_spec, observed: _Observed, boot: dict) -> Estimate:
    f, g = _bind(spec, observed), _bind(best_spec, observed)
    if f is None:
        return Estimate(None, None, None, observed.items, "its agreement is undefined")
    return estimate(lambda w: f(w) - g(w), observed.items, undefined="undefined", bounds=(-2.0, 2.0), **boot)


def _zero(observed: _Observed) -> Estimate:
    return Estimate(0.0, 0.0, 0.0, observed.items)


def _reasons(agreements: dict[str, Estimate]) -> str:
    return "; ".join(f"{name}: {a.reason}" for name, a in agreements.items())


def _cheapness(option: JudgeOption) -> tuple:
    cost = option.spend.cost_usd
    return (cost is None, cost or 0.0, -(option.agreement.value or -2.0), option.name)


def _records(run, name: str) -> list:
    """The stored repeat-0 scores of a configuration (a judge label, or a metric spec NAME[:THRESHOLD])."""
    judged = run.records(kind="judge", label=name, repeat=0)
    if judged:
        return judged
    metric = name.rpartition(":")[0] if ":" in name else name
    return run.records(kind="metric", label=metric, repeat=0)


def _identities(run, name: str) -> tuple[str, ...]:
    found = {r.judge_id for r in _records(run, name) if r.judge_id}
    found |= {str(r.details.get("judge")) for r in _records(run, name) if r.details_json and r.details.get("judge")}
    return tuple(sorted(found))


def _spend(run, name: str) -> Spend:
    usages = [r.usage for r in _records(run, name)]
    n = len(usages) or 1
    unpriced = tuple(sorted({m for u in usages for m in u.unpriced}))
    cost = None if unpriced else sum(u.cost_usd or 0.0 for u in usages) / n

    def mean(values: list[int]) -> float:
        return float(np.sum(values)) / n

    return Spend(
        len(usages),
        cost,
        mean([u.calls + u.cache_hits for u in usages]),
        mean([u.input_tokens for u in usages]),
        mean([u.output_tokens for u in usages]),
        mean([u.reasoning_tokens for u in usages]),
        unpriced,
    )


#: The shared observations of named configurations on the labelled items (public name of :func:`_observations`).
observations = _observations
#: A configuration's agreement with people, with its bootstrap interval (public name of :func:`_estimate`).
agreement_of = _estimate
#: One configuration's agreement minus another's, paired bootstrap on the same items (public name).
paired_difference = _difference
#: The agreement statistic a rubric takes (public name of :func:`_statistic`).
statistic_for = _statistic
#: The judge ids a configuration's stored judgements carry (public name of :func:`_identities`).
identities_of = _identities
