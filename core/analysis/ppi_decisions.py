"""Prediction-powered verdicts of a run (``compare --labelled``) and of the gate (``gate --labelled``), and each
system's prediction-powered mean label; the procedure is :mod:`.ppi_verdicts`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError
from .gate import INCONCLUSIVE, NON_INFERIORITY, PASS, REGRESSION, GateRow, aligned, gate, margin_for
from .human_labels import HumanLabel, Rubric
from .ppi_labels import Labelled, check_labelled
from .ppi_verdicts import (
    NEED,
    PairData,
    PPIPair,
    PPISystem,
    PPIVerdicts,
    compare_verdict,
    decide_family,
    design_of,
    drawn_difference,
    drawn_item,
    estimate,
    pair_data,
    ppi_pair,
    preference,
    side_values,
    turns_note,
    undecided_reason,
)


def ppi_compare(
    run,
    labels: Sequence[HumanLabel],
    labelled: Sequence[Labelled],
    *,
    baseline: str | None = None,
    alpha: float = 0.05,
    source: str = "",
) -> PPIVerdicts:
    """Every system of ``run`` (:class:`ragassay.results.RunData`) against ``baseline`` (default: its first
    system) on each labelled metric, one Holm family (:mod:`.ppi_verdicts`), and each system's estimate."""
    rubrics = check_labelled(run, labelled, labels, source or "the labels")
    baseline = baseline or run.systems[0]
    items, meta = [], []
    for entry in labelled:
        rubric = rubrics[entry.metric]
        scale, matched = side_values(run, labels, entry, rubric)
        for system in [s for s in run.systems if s != baseline]:
            items.append(run_pair(run, entry.metric, baseline, system, rubric, scale, matched))
            meta.append(rubric)
    decided = decide_family(items, alpha)
    pairs = [
        ppi_pair(item, d, baseline, rubric, *compare_verdict(d[0], d[1], item))
        for item, d, rubric in zip(items, decided, meta)
    ]
    systems = [s for entry in labelled for s in system_estimates(run, labels, entry, rubrics[entry.metric])]
    family = [x.metric for x in labelled]
    return PPIVerdicts(run.id, baseline, alpha, source, family, pairs, systems, notes=turns_note(run))


def run_pair(run, metric: str, base: str, system: str, rubric: Rubric, scale, matched) -> PairData:
    ids = run.question_ids
    fb, fc = (scale.of(run.values(s, metric)) for s in (base, system))
    if rubric.kind == "pairwise":
        got = sum(preference(matched, q, base, system) is not None for q in ids)
        return pair_data((system, metric), ids, fb, fc, lambda q: preference(matched, q, base, system), (got, got))
    both = ~np.isnan(fb) & ~np.isnan(fc)
    counts = tuple(sum((s, q) in matched for q, ok in zip(ids, both) if ok) for s in (base, system))

    def y_diff(q: str):
        yb, yc = matched.get((base, q)), matched.get((system, q))
        return None if yb is None or yc is None else drawn_difference(yb, yc)

    return pair_data((system, metric), ids, fb, fc, y_diff, counts)


def system_estimates(run, labels, entry: Labelled, rubric: Rubric, confidence: float = 0.95) -> list[PPISystem]:
    """Each system's prediction-powered mean label of ``rubric`` (binary and ordinal rubrics; none for a
    pairwise one, whose labels rate two systems at once)."""
    if rubric.kind == "pairwise":
        return []
    scale, matched = side_values(run, labels, entry, rubric)
    out = []
    for system in run.systems:
        f = scale.of(run.values(system, entry.metric))
        scored = [(q, float(v)) for q, v in zip(run.question_ids, f) if not np.isnan(v)]
        drawn = [drawn_item(matched[(system, q)]) for q, _ in scored if (system, q) in matched]
        judged = [v for q, v in scored if (system, q) in matched]
        rest = [v for q, v in scored if (system, q) not in matched]
        design = design_of((system, entry.metric), drawn)
        out.append(_system(entry, rubric, system, ([d.value for d in drawn], judged, rest, design), confidence))
    return out


def _system(entry, rubric, system, inputs, confidence) -> PPISystem:
    truth, judged, rest, design = inputs
    if len(truth) < NEED or len(rest) < NEED:
        why = f"{len(truth)} labels, need {NEED}" if len(truth) < NEED else f"{len(rest)} unlabelled, need {NEED}"
        return PPISystem(entry.metric, rubric.name, system, len(truth), len(rest), *(None,) * 7, reason=why)
    r = estimate(truth, judged, rest, design, confidence)
    judge = r.judge_only
    return PPISystem(
        entry.metric, rubric.name, system, r.labelled, r.unlabelled, r.estimate, r.low, r.high, r.lam,
        judge.mean, judge.low, judge.high,
    )  # fmt: skip


def ppi_gate(candidate, baseline, settings, labels: Sequence[HumanLabel], labelled: Sequence[Labelled], **options):
    """:func:`ragassay.analysis.gate.gate` deciding the labelled metrics (they are the family) on people's
    labels: each row's difference, interval and outcome are the prediction-powered ones (on the rubric's scale),
    and :attr:`GateResult.ppi` holds the details."""
    import dataclasses

    settings = dataclasses.replace(settings, family=[x.metric for x in labelled])
    result = gate(candidate, baseline, settings, **options)
    systems = list(dict.fromkeys(row.system for row in result.rows))
    shared = [q for q in candidate.question_ids if q in baseline.position]
    margins = {x.metric: margin_for(candidate, x.metric, settings) for x in labelled}
    pairs = gate_pairs(candidate, baseline, labels, labelled, systems, shared, settings, margins)
    by_key = {(r.system, r.metric): r for r in result.rows}
    pairs = [p for p in pairs if (p.system, p.metric) in by_key]  # a metric the gate left out stays out
    rows = [_gate_row(pair, by_key[(pair.system, pair.metric)]) for pair in pairs]
    return dataclasses.replace(result, rows=rows, ppi=pairs, notes=[*result.notes, *turns_note(candidate)])


def _gate_row(pair: PPIPair, row: GateRow) -> GateRow:
    """The gate's row of a labelled metric, decided on people's labels (values on the rubric's scale)."""
    import dataclasses

    return dataclasses.replace(
        row,
        direction="higher",
        baseline_mean=None,
        candidate_mean=None,
        mean_diff=pair.estimate,
        ci_low=pair.low,
        ci_high=pair.high,
        level=pair.level,
        p_holm=pair.p_holm,
        margin=None if row.margin is None else -pair.null,
        outcome=pair.verdict,
        reason=pair.reason or f"decided on {pair.labelled} labelled samples of {pair.rubric} (prediction-powered)",
        needed=None,
        needed_clusters=None,
    )


def gate_pairs(candidate, baseline, labels, labelled, systems, shared, settings, margins) -> list[PPIPair]:
    """The gate's comparisons of the labelled metrics: each system of the candidate run against the same system
    of the baseline run on the ``shared`` samples, labels matched in each run; ``margins``: metric -> margin in
    its units (non-inferiority). A pairwise rubric cannot decide here: a preference compares two systems of one
    run."""
    rubrics = check_labelled(candidate, labelled, labels, "the labels")
    ni = settings.mode == NON_INFERIORITY
    items, meta = [], []
    for entry in labelled:
        rubric = rubrics[entry.metric]
        if rubric.kind == "pairwise":
            raise ConfigError(
                f"--labelled {entry.metric}={entry.rubric}: a preference compares two systems of one run; the gate "
                "compares each system with itself in another run. Give a binary or ordinal rubric."
            )
        (scale, cand), (_, base) = (side_values(run, labels, entry, rubric) for run in (candidate, baseline))
        null = -margins[entry.metric] * abs(scale.factor) if ni else 0.0
        for system in systems:
            fb, fc = (scale.of(aligned(run, system, entry.metric, shared)) for run in (baseline, candidate))
            counts = (sum((system, q) in base for q in shared), sum((system, q) in cand for q in shared))

            def y_diff(q: str, s=system, b=base, c=cand):
                yb, yc = b.get((s, q)), c.get((s, q))
                return None if yb is None or yc is None else drawn_difference(yb, yc)

            items.append(pair_data((system, entry.metric), shared, fb, fc, y_diff, counts, null))
            meta.append(rubric)
    decided = decide_family(items, settings.alpha)
    return [
        ppi_pair(item, d, system_of(item), rubric, *gate_outcome(d, item, ni))
        for item, d, rubric in zip(items, decided, meta)
    ]


def system_of(item: PairData) -> str:
    """The baseline side's name in the gate: the same system, in the baseline run."""
    return f"{item.key[0]} (baseline run)"


def gate_outcome(decided, item: PairData, ni: bool) -> tuple[str, str]:
    """pass / regression / inconclusive on the prediction-powered interval, as :func:`ragassay.analysis.gate`
    decides on the paired one."""
    result, level, _ = decided
    if result is None:
        return INCONCLUSIVE, undecided_reason(item)
    if not ni:
        return (REGRESSION, "shown worse on people's labels") if result.high < 0 else (PASS, "")
    if result.low > item.null:
        return PASS, ""
    if result.high < item.null:
        return REGRESSION, "shown worse than the margin on people's labels"
    if result.high < 0:
        return REGRESSION, "shown worse on people's labels, and not shown within the margin"
    return INCONCLUSIVE, "neither shown within the margin nor shown worse: too few labels to tell"


def run_pair_family(run, labels, entry: Labelled, pairs, settings) -> list[PPIPair]:
    """Systems of one run against another of it (``pairs``: (system, baseline)), decided as the gate decides
    (``settings``: mode, margin, alpha) on people's labels (``assert_no_regression(..., labelled=RUBRIC)``)."""
    import dataclasses

    rubric = check_labelled(run, [entry], labels, "the labels")[entry.metric]
    scale, matched = side_values(run, labels, entry, rubric)
    ni = settings.mode == NON_INFERIORITY
    null = -margin_for(run, entry.metric, settings) * abs(scale.factor) if ni else 0.0
    items = [
        dataclasses.replace(run_pair(run, entry.metric, base, mine, rubric, scale, matched), null=null)
        for mine, base in pairs
    ]
    decided = decide_family(items, settings.alpha)
    return [
        ppi_pair(item, d, base, rubric, *gate_outcome(d, item, ni)) for item, d, (_, base) in zip(items, decided, pairs)
    ]
