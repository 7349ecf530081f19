"""Meta-evaluation against people: each judge (or metric) of a run against the labels people gave its outputs,
by rubric kind, with the agreement among the people themselves as the ceiling.

- **binary** rubrics (``correct``): an item's truth is the majority of its labels (a tie leaves the item out, with
  a note); the judge's verdict (``correct``, or score >= the judge threshold; a metric as ``NAME:THRESHOLD``) gives
  precision, recall, balanced accuracy and Cohen's kappa (:mod:`.agreement`), and the PPI estimates of each
  system's share of correct answers use these labels, an item's label being the mean of its people's labels (ties
  included) (:func:`.meta_eval.ppi_mean`);
- **ordinal** rubrics (``faithful`` 1..5): each person's label is one observation against the judge's score on
  that item: **quadratic**-weighted kappa on the rubric's scale (a score already on the scale is taken as is, a
  score in [0, 1] is put on the scale linearly, min + s (max - min), and rounded to the nearest value) and
  Spearman's rho of score and label;
- **pairwise** rubrics (``preference`` -2..2, second answer much worse .. much better): an item is the unordered
  pair (a, b) in name order, each label's value turned to rate b against a (a pair shown as (b, a) is negated:
  :attr:`.human_labels.HumanLabel.item_value`), so the display order changes nothing; the judge's score
  difference (b minus a) against the preference, Pearson and Spearman, with each person's label as one
  observation (as RAGChecker's meta-evaluation does, Ru et al. 2024, section 4.3) and with the per-item mean label.

Observations from several people of one item are resampled together (a cluster bootstrap over items).
The ceiling: Cohen's kappa for each pair of annotators on the items both labelled (unweighted for binary,
quadratic for ordinal and pairwise) and Krippendorff's alpha over all of them (nominal, ordinal, interval); for
pairwise rubrics also Pearson and Spearman of each pair of annotators' preferences on the items both labelled (the
human-human correlation RAGChecker and most papers report beside the judge-human figures).
"""

from __future__ import annotations

import dataclasses
import statistics as stats
from collections.abc import Mapping

from ..errors import ConfigError
from .agreement import (
    Estimate,
    binary_agreement,
    clustered,
    correlation,
    estimate,
    pearson_statistic,
    spearman_statistic,
)
from .agreement import weighted_kappa_statistic as kappa_statistic
from .annotators import annotator_pairs, by_item, krippendorff_alpha
from .human_labels import KINDS, HumanLabel, Rubric, latest, rubric_of
from .meta_eval_load import CorrectedEstimate, _corrected

ALPHA_LEVEL = {"binary": "nominal", "ordinal": "ordinal", "pairwise": "interval"}


@dataclasses.dataclass(frozen=True)
class Agreement:
    """One statistic of one judge (or of the people: ``judge`` names the annotators) on one rubric."""

    rubric: str
    judge: str
    statistic: str
    estimate: Estimate
    unit: str  # what one observation is: "item" or "label"

    def as_row(self) -> dict:
        e = self.estimate
        return {
            "rubric": self.rubric,
            "judge": self.judge,
            "statistic": self.statistic,
            "value": e.value,
            "low": e.low,
            "high": e.high,
            "n": e.n,
            "unit": self.unit,
            "reason": e.reason,
        }


@dataclasses.dataclass(frozen=True)
class RubricReport:
    """Everything measured on one rubric's labels."""

    rubric: Rubric
    annotators: list[str]
    items: int
    labels: int
    agreement: list[Agreement]
    ceiling: list[Agreement]
    corrected: list[CorrectedEstimate]
    notes: list[str]


@dataclasses.dataclass(frozen=True)
class PeopleEvaluation:
    run_id: str
    source: str
    rubrics: list[RubricReport]


def evaluate_against_people(
    run,
    labels: list[HumanLabel],
    *,
    source: str,
    judges=(),
    metrics=(),
    judge_threshold=0.5,
    rubrics: Mapping[str, Rubric] | None = None,
    **bootstrap,
) -> PeopleEvaluation:
    """Each judge of ``run`` (or ``judges``) and each metric spec (``NAME`` or ``NAME:THRESHOLD``) against the
    ``labels`` of this run, one report per rubric; ``rubrics``: the definitions of custom rubrics by name (from
    their files, :func:`.human_labels.rubric_files`), the shipped ones need none."""
    mine = latest(label for label in labels if label.run_id == run.id)
    if not mine:
        runs = sorted({label.run_id[:12] for label in labels})
        raise ConfigError(f"no label in {source} is for run {run.id[:12]} (labels for runs: {', '.join(runs)})")
    scores = _scores(run, judges, metrics)
    reports = []
    for name in sorted({label.rubric for label in mine}):
        rubric = rubric_of(name, rubrics)
        chosen = [label for label in mine if label.rubric == name]
        reports.append(_rubric_report(run, rubric, chosen, scores, metrics, judge_threshold, bootstrap))
    return PeopleEvaluation(run.id, source, reports)


def _scores(run, judges, metrics) -> dict[str, dict]:
    """candidate -> (system, question_id) -> (score, verdict) for the chosen judges and metrics."""
    found: dict[str, dict] = {}
    for s in run.records(kind="judge", repeat=0):
        found.setdefault(s.label, {})[(s.system, s.question_id)] = (s.value, s.verdict)
    for name in judges:
        if name not in found:
            raise ConfigError(f"run {run.id[:12]} has no judge '{name}'; its judges: {', '.join(found) or 'none'}")
    chosen = {name: found[name] for name in (judges or list(found))}
    values: dict[str, dict] = {}
    for s in run.records(kind="metric", repeat=0):
        values.setdefault(s.label, {})[(s.system, s.question_id)] = (s.value, None)
    for spec in metrics:
        name = spec.rpartition(":")[0] if _has_threshold(spec) else spec
        if name not in values:
            raise ConfigError(f"run {run.id[:12]} has no metric '{name}'; its metrics: {', '.join(values) or 'none'}")
        chosen[spec] = values[name]
    if not chosen:
        raise ConfigError(f"run {run.id[:12]} has no judge to evaluate; add a metric with --metric NAME")
    return chosen


#: candidate -> (system, question_id) -> (score, verdict) of a run's chosen judges and metric specs (public name).
candidate_scores = _scores


def _has_threshold(spec: str) -> bool:
    try:
        float(spec.rpartition(":")[2])
    except ValueError:
        return False
    return ":" in spec


def _verdict(pair, candidate: str, threshold: float) -> bool | None:
    score, verdict = pair
    if verdict in ("correct", "incorrect"):
        return verdict == "correct"
    if _has_threshold(candidate):
        threshold = float(candidate.rpartition(":")[2])
    return None if score is None else score >= threshold


#: A candidate's verdict on one item: True, False or None (public name of :func:`_verdict`).
verdict_of = _verdict


def _rubric_report(run, rubric, labels, scores, metrics, judge_threshold, bootstrap) -> RubricReport:
    notes: list[str] = []
    builder = {"binary": _binary, "ordinal": _ordinal, "pairwise": _pairwise}.get(rubric.kind)
    if builder is None:
        raise ConfigError(f"rubric '{rubric.name}' has kind '{rubric.kind}'; meta-eval reads {', '.join(KINDS)}")
    bad = sorted({label.value for label in labels if label.value not in rubric.values})
    if bad:
        raise ConfigError(f"labels of rubric '{rubric.name}' have values {bad} outside its scale {list(rubric.values)}")
    versions = sorted({label.rubric_version for label in labels})
    if len(versions) > 1:
        notes.append(f"labels of rubric versions {versions} are read together")
    agreement, corrected = builder(run, rubric, labels, scores, judge_threshold, notes, bootstrap, metrics)
    items = by_item([(label.item, label.annotator, label.item_value) for label in labels])
    return RubricReport(
        rubric,
        sorted({label.annotator for label in labels}),
        len(items),
        len(labels),
        agreement,
        _ceiling(rubric, items, bootstrap),
        corrected,
        notes,
    )


def _binary(run, rubric, labels, scores, threshold, notes, bootstrap, metrics):
    items = by_item([(label.item, label.annotator, label.value) for label in labels])
    truth, ties, shares = {}, 0, {}
    for item, values in sorted(items.items()):
        shares[item] = stats.fmean(values.values())
        if shares[item] == 0.5:
            ties += 1
        else:
            truth[item] = shares[item] > 0.5
    if ties:
        notes.append(f"{ties} items whose labels are tied (as many 0 as 1) are left out")
    rows, verdicts = [], {}
    for name in metrics:
        if not _has_threshold(name):
            notes.append(
                f"metric {name}: a value >= {threshold:g} (the judge threshold) counts as correct; "
                f"give {name}:THRESHOLD to choose"
            )
    for name, pairs in scores.items():
        judged = {key: _verdict(pair, name, threshold) for key, pair in pairs.items()}
        verdicts[name] = judged
        keys = [k for k in sorted(truth) if judged.get(k) is not None]
        result = binary_agreement([truth[k] for k in keys], [judged[k] for k in keys], **bootstrap)
        rows += [Agreement(rubric.name, name, stat, value, "item") for stat, value in result.items()]
    corrected = _corrected(shares, verdicts, run.systems)  # PPI: an item's label is the mean of its labels
    return rows, corrected


def on_scale(scores: list[float], scale: tuple[float, ...]) -> list[float] | None:
    """A judge's scores on the rubric's scale (module docstring): as they are when every one is a scale value,
    else put linearly from [0, 1] and rounded to the nearest value; None when neither holds. Decided for the
    judge as a whole, so a 0/1 judge on a 1..5 scale maps 1 to 5, not to 1."""
    if all(score in scale for score in scores):
        return list(scores)
    if not all(0.0 <= score <= 1.0 for score in scores):
        return None
    targets = [scale[0] + score * (scale[-1] - scale[0]) for score in scores]
    return [min(scale, key=lambda value: (abs(value - target), value)) for target in targets]


def _ordinal(run, rubric, labels, scores, threshold, notes, bootstrap, metrics):
    rows = []
    for name, pairs in scores.items():
        observed = [(label, pairs[label.item][0]) for label in labels if pairs.get(label.item, (None,))[0] is not None]
        clusters = [label.item for label, _ in observed]
        humans, judged = [label.value for label, _ in observed], [score for _, score in observed]
        placed = on_scale(judged, rubric.values)
        if placed is None:
            reason = "the judge's scores are neither on the rubric's scale nor in [0, 1]"
            kappa = Estimate(None, None, None, len(humans), reason)
        else:
            kappa = _clustered(kappa_statistic(humans, placed, rubric.values), clusters, bootstrap, "one category only")
        rho = _clustered(spearman_statistic(judged, humans), clusters, bootstrap, "one side does not vary")
        rows += [
            Agreement(rubric.name, name, "weighted_kappa_quadratic", kappa, "label"),
            Agreement(rubric.name, name, "spearman", rho, "label"),
        ]
    return rows, []


def _pairwise(run, rubric, labels, scores, threshold, notes, bootstrap, metrics):
    rows = []
    for name, pairs in scores.items():
        observed = []
        for label in labels:
            sample, first, second = label.item
            a, b = pairs.get((first, sample), (None,))[0], pairs.get((second, sample), (None,))[0]
            if a is not None and b is not None:
                observed.append((label.item, b - a, label.item_value))
        clusters = [item for item, _, _ in observed]
        diffs, prefs = [d for _, d, _ in observed], [p for _, _, p in observed]
        means = by_item([(item, str(i), p) for i, (item, _, p) in enumerate(observed)])
        item_diff = {item: d for item, d, _ in observed}
        keys = sorted(means)
        per_item = ([item_diff[k] for k in keys], [stats.fmean(means[k].values()) for k in keys])
        for method, statistic in (("pearson", pearson_statistic), ("spearman", spearman_statistic)):
            value = _clustered(statistic(diffs, prefs), clusters, bootstrap, "one side does not vary")
            rows.append(Agreement(rubric.name, name, method, value, "label"))
            mean = estimate(
                statistic(*per_item), len(keys), undefined="one side does not vary", bounds=(-1.0, 1.0), **bootstrap
            )
            rows.append(Agreement(rubric.name, name, f"{method}_item_mean", mean, "item"))
    return rows, []


def _clustered(statistic, clusters, bootstrap, undefined: str) -> Estimate:
    resampled, n = clustered(statistic, clusters)
    result = estimate(resampled, n, undefined=undefined, bounds=(-1.0, 1.0), **bootstrap)
    return dataclasses.replace(result, n=len(clusters))


def _correlations(rubric: Rubric, pair: str, first: list, second: list, bootstrap) -> list[Agreement]:
    """Pearson and Spearman of two annotators' values on the items both labelled (pairwise rubrics)."""
    return [
        Agreement(rubric.name, pair, method, correlation(first, second, method, **bootstrap), "item")
        for method in ("pearson", "spearman")
    ]


def _ceiling(rubric: Rubric, items: dict, bootstrap) -> list[Agreement]:
    rows = []
    weights = "none" if rubric.kind == "binary" else "quadratic"
    for a, b in annotator_pairs(items):
        both = [values for values in items.values() if a in values and b in values]
        statistic = kappa_statistic([v[a] for v in both], [v[b] for v in both], rubric.values, weights)
        kappa = estimate(
            statistic,
            len(both),
            undefined="chance agreement is perfect (one category only)",
            bounds=(-1.0, 1.0),
            **bootstrap,
        )
        name = "cohen_kappa" if weights == "none" else "weighted_kappa_quadratic"
        rows.append(Agreement(rubric.name, f"{a} ~ {b}", name, kappa, "item"))
        if rubric.kind == "pairwise":
            rows += _correlations(rubric, f"{a} ~ {b}", [v[a] for v in both], [v[b] for v in both], bootstrap)
    level = ALPHA_LEVEL[rubric.kind]
    alpha = krippendorff_alpha([list(v.values()) for v in items.values()], rubric.values, level, **bootstrap)
    rows.append(Agreement(rubric.name, "all annotators", f"krippendorff_alpha_{level}", alpha, "item"))
    return rows
