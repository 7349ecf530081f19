"""Assertions with statistical sense for tests of a RAG system (re-exported by :mod:`ragassay.testing.pytest_plugin`).

* :func:`assert_no_regression` decides each pair exactly as ``ragassay gate`` does
  (:func:`ragassay.analysis.gate.gate_rows`: non-inferiority with the run's ``[gate]`` margin by default, or
  superiority): it fails on a regression, and on a pair the samples cannot decide unless ``on_inconclusive``
  is "pass".
* :func:`assert_metric` fails when the lower bound of the BCa bootstrap interval of a mean is below a floor
  (Efron & Tibshirani 1993, An Introduction to the Bootstrap, section 14.3), not when the mean is.

A failure message is a few plain lines: the decision with its numbers, and the samples that got worse (or the
worst ones) with question and answer. pytest shows it without the helper's source. See docs/pytest.md.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..errors import ConfigError

WORST = 5


def assert_no_regression(
    run: Any,
    baseline: Any,
    metric: str,
    alpha: float = 0.05,
    *,
    system: str | None = None,
    seed: int = 0,
    mode: str | None = None,
    margin: float | None = None,
    on_inconclusive: str | None = None,
    labelled: str | None = None,
    labels: Any = None,
) -> None:
    """Fail when a system regresses against ``baseline`` on ``metric``, paired by question_id, as the gate decides.

    :param run: a :class:`ragassay.Run`.
    :param baseline: a system name of ``run``, or another :class:`ragassay.Run` (then the runs' systems named
        ``system``, or their only systems, are paired by question_id).
    :param system: the system under test; default: every other system of ``run`` (one Holm family).
    :param mode: "non-inferiority" or "superiority"; ``margin``: a share of the metric's range;
        ``on_inconclusive``: "fail" or "pass". Each defaults to the run's ``[gate]`` settings (docs/ci.md).
    :param labelled: a rubric (e.g. "correct"): decide on people's labels of it instead, the metric correcting them
        on every sample (prediction-powered, as ``gate --labelled metric=RUBRIC``; docs/statistics.md, When the
        judge errs); binary or ordinal rubrics, and a pairwise one when ``baseline`` is a system of ``run``.
    :param labels: with ``labelled``: a labels export (a path to a JSONL file, ``ragassay labels export``) or a
        list of labels (:class:`ragassay.labels.Label`); default: the labels stored for the run(s).
    """
    __tracebackhide__ = True
    from ..analysis.gate import INCONCLUSIVE, REGRESSION, GateSettings, aligned, gate_rows, margin_for, shared_clusters

    data = run.data(payloads=True)
    other = data if isinstance(baseline, str) else baseline.data(payloads=labelled is not None)
    pairs = _pairs(data, other, baseline, system)
    _known(data, metric)
    _known(other, metric)
    settings = GateSettings.of(
        data.info.config.get("gate") or {},
        mode=mode,
        margin=margin,
        on_inconclusive=on_inconclusive,
        alpha=alpha,
        seed=seed,
    )
    shared = [q for q in data.question_ids if q in other.position]
    if labelled is not None:
        _labelled_regression(run, baseline, data, other, pairs, metric, labelled, labels, settings, shared)
        return
    keys = [(f"{mine}|{theirs}", metric) for mine, theirs in pairs]
    cand = {k: aligned(data, mine, metric, shared) for k, (mine, _) in zip(keys, pairs)}
    base = {k: aligned(other, theirs, metric, shared) for k, (_, theirs) in zip(keys, pairs)}
    margins = {metric: margin_for(data, metric, settings)}
    clusters = shared_clusters(data, shared)  # turns of one conversation are flipped together, as the gate does
    rows = gate_rows(keys, base, cand, {metric: data.direction(metric)}, margins, settings, clusters)
    fail_inconclusive = settings.on_inconclusive == "fail"
    failing = [r for r in rows if r.outcome == REGRESSION or (r.outcome == INCONCLUSIVE and fail_inconclusive)]
    if failing:
        lines = [_headline(r, settings) for r in failing]
        for row, (mine, theirs) in zip(rows, pairs):
            if row in failing:
                lines += _got_worse(data, other, mine, theirs, metric, shared)
        raise AssertionError("\n".join(lines))


def _labelled_regression(run, baseline, data, other, pairs, metric, rubric, labels, settings, shared) -> None:
    """:func:`assert_no_regression` on people's labels (prediction-powered; ``labelled``)."""
    __tracebackhide__ = True
    from ..analysis.gate import REGRESSION
    from ..analysis.ppi_decisions import gate_pairs, run_pair_family
    from ..analysis.ppi_labels import Labelled
    from ..analysis.ppi_verdicts import turns_note

    entry = Labelled(metric, rubric)
    sides = [(run, data)] if isinstance(baseline, str) else [(run, data), (baseline, other)]
    people, used = _people_labels(labels, rubric, sides)
    for note in turns_note(data):
        warnings.warn(f"assert_no_regression(labelled={rubric!r}): {note}", stacklevel=3)
    if isinstance(baseline, str):
        found = run_pair_family(data, people, entry, pairs, settings)
    else:
        if pairs[0][0] != pairs[0][1]:
            raise ConfigError(f"labelled: the runs' systems {pairs[0][0]} and {pairs[0][1]} must have one name")
        margins = {metric: _margin_of(data, metric, settings)}
        found = gate_pairs(data, other, people, [entry], [pairs[0][0]], shared, settings, margins)
    fail_inconclusive = settings.on_inconclusive == "fail"
    failing = [p for p in found if p.verdict == REGRESSION or (p.verdict == "inconclusive" and fail_inconclusive)]
    if failing:
        raise AssertionError("\n".join([*(_labelled_line(p, settings) for p in failing), *used.lines()]))


def _margin_of(data, metric: str, settings) -> float:
    from ..analysis.gate import margin_for

    return margin_for(data, metric, settings)


def _people_labels(labels: Any, rubric: str, sides: list) -> tuple[list, Any]:
    """The labels ``labelled`` decides on, as :func:`ragassay.results.read_people` keeps them on each run of
    ``sides`` ((Run, its data read with payloads)): from a labels export path or a list of labels, else (None) from
    the runs' stores (every run's labels of the same answers); (labels, what counted)."""
    import contextlib
    from pathlib import Path

    from ..analysis.human_labels import HumanLabel, read_label_export, stored_labels
    from ..results import read_people

    given, source = None, "the labels in the results store"
    if isinstance(labels, (str, Path)):
        given, source = [x.as_label() for x in read_label_export(Path(labels))], f"labels file {Path(labels).name}"
    elif labels is not None:
        given, source = [x.as_label() if isinstance(x, HumanLabel) else x for x in labels], "the labels given"
    with contextlib.ExitStack() as stack:
        stores = [None if given is not None else stack.enter_context(run._store()) for run, _ in sides]
        used = read_people([(store, data) for store, (_, data) in zip(stores, sides)], [rubric], given, source)
    return stored_labels(used.labels), used


def _labelled_line(p, settings) -> str:
    from ..analysis.sentences import confidence

    if p.estimate is None:
        return f"inconclusive on {p.metric} ({p.rubric}): {p.system} against {p.baseline}: {p.reason}"
    return (
        f"{p.verdict} on {p.metric} decided on people's labels of {p.rubric} ({settings.mode}): {p.system} against "
        f"{p.baseline}: {p.reason or 'not shown within the margin'}. Prediction-powered difference {p.estimate:+.4f}, "
        f"{confidence(p.level)} CI [{p.low:+.4f}, {p.high:+.4f}], {p.labelled} labelled of {p.n} samples, lambda "
        f"{p.lam:.2f}; the metric alone: {p.judge_mean:+.4f} [{p.judge_low:+.4f}, {p.judge_high:+.4f}]"
    )


def _mean_interval(data: Any, values: Any, confidence: float, seed: int) -> Any:
    """The mean's bootstrap interval; over whole conversations when the samples are turns of conversations."""
    from ..analysis.bootstrap import bootstrap_mean_ci
    from ..analysis.clustered import cluster_mean_ci, clusters_of
    from ..analysis.verdicts import RESAMPLES

    if data.conversations is None:
        return bootstrap_mean_ci(values, n_resamples=RESAMPLES, confidence_level=confidence, seed=seed)
    units = clusters_of(data.clusters)
    return cluster_mean_ci(values, units, n_resamples=RESAMPLES, confidence_level=confidence, seed=seed)[0]


def assert_metric(
    run: Any,
    metric: str,
    at_least: float | None = None,
    *,
    at_most: float | None = None,
    confidence: float = 0.95,
    system: str | None = None,
    seed: int = 0,
) -> None:
    """Fail when the ``confidence`` bootstrap interval of the mean of ``metric`` does not lie above
    ``at_least`` (its lower bound is below it) or below ``at_most`` (its upper bound is above it).

    :param system: the system to check; default: every system of the run.
    :param seed: the seed of the bootstrap resamples (same seed, same bounds).
    """
    __tracebackhide__ = True
    from ..analysis.paired import no_variation
    from ..analysis.verdicts import RESAMPLES

    if (at_least is None) == (at_most is None):
        raise ConfigError(f"assert_metric({metric!r}): give exactly one of at_least= or at_most=")
    data = run.data(payloads=True)
    _known(data, metric)
    failures = []
    for name in [_system(data, system)] if system else data.systems:
        values = data.values(name, metric)
        scored = values[~np.isnan(values)]
        interval = _mean_interval(data, values, confidence, seed)
        low, high = interval.ci_low, interval.ci_high
        if low is None and len(scored) >= 2 and no_variation(scored):
            low = high = float(scored[0])  # every scored value equal: the interval is that value
        bound, limit = (low, at_least) if at_least is not None else (high, at_most)
        if bound is None or (bound < limit if at_least is not None else bound > limit):
            word, goal = (
                ("lower", f"at least {at_least:g}") if at_least is not None else ("upper", f"at most {at_most:g}")
            )
            failed = (
                f"{confidence:.0%} {word} bound {bound:.4f}" if bound is not None else f"no bound ({interval.reason})"
            )
            failures += [
                f"{metric} of {name}: {failed}, wanted {goal}: mean {_num(interval.mean)}, {confidence:.0%} CI "
                f"[{_num(low)}, {_num(high)}], n {interval.n_scored} scored, {len(values) - len(scored)} without a "
                f"value (BCa bootstrap, {RESAMPLES:,} resamples, seed {seed})",
                *_worst(data, name, metric),
            ]
    if failures:
        raise AssertionError("\n".join(failures))


def _pairs(data, other, baseline: Any, system: str | None) -> list[tuple[str, str]]:
    """(system under test, its baseline) pairs."""
    if isinstance(baseline, str):
        if baseline not in data.systems:
            raise ConfigError(
                f"baseline '{baseline}' is not a system of run {data.id[:12]}. Its systems: {', '.join(data.systems)}"
            )
        return [(_system(data, system), baseline)] if system else [(s, baseline) for s in data.systems if s != baseline]
    mine, theirs = _single(data, system), _single(other, system)
    return [(mine, theirs)]


def _headline(row, settings) -> str:
    from ..analysis.sentences import confidence

    mine, theirs = row.system.split("|")
    interval = (
        "no interval"
        if row.level is None
        else (f"{confidence(row.level)} CI [{_bound(row.ci_low)}, {_bound(row.ci_high)}]")
    )
    how = f"{settings.mode}" + (f", margin {row.margin:g}" if row.margin is not None else "")
    verdict = "regression" if row.outcome == "regression" else "inconclusive (fails unless on_inconclusive='pass')"
    settle = f"; about {row.needed:,} samples would settle it" if row.needed else ""
    return (
        f"{verdict} on {row.metric}: {mine} against {theirs} ({how}): {row.reason or 'shown worse'}. "
        f"{_num(row.baseline_mean)} -> {_num(row.candidate_mean)}, difference {row.mean_diff:+.4f}, {interval}, "
        f"n {row.n}, differing on {row.n_discordant}{settle}"
    )


def _got_worse(data, other, mine: str, theirs: str, metric: str, shared: list[str]) -> list[str]:
    from ..analysis.gate import aligned
    from ..analysis.worst import got_worse

    now, before = aligned(data, mine, metric, shared), aligned(other, theirs, metric, shared)
    found = got_worse(shared, now, before, data.direction(metric), WORST)
    if not found:
        return [f"  no sample of {mine} scored worse than {theirs} on {metric}"]
    lines = [f"  samples where {mine} got worse (question id: {theirs} -> {mine}, question, answer):"]
    for qid, was, now_value in found:
        question = _short(data.samples[data.position[qid]].question)
        lines.append(f"    {qid}: {was:.4g} -> {now_value:.4g}  {question}  answer: {_answer(data, mine, qid)}")
    return lines


def _worst(data, system: str, metric: str) -> list[str]:
    values = data.values(system, metric)
    order = np.argsort(values if data.direction(metric) != "lower" else -values, kind="stable")
    chosen = [i for i in order if not np.isnan(values[i])][:WORST]
    lines = [f"  {len(chosen)} worst samples of {system} on {metric} (question id, value, question, answer):"]
    for i in chosen:
        qid = data.question_ids[i]
        question = _short(data.samples[i].question)
        lines.append(f"    {qid}  {values[i]:.4g}  question: {question}  answer: {_answer(data, system, qid)}")
    return lines


def _answer(data, system: str, qid: str) -> str:
    output = data.payload(system, qid)
    return _short(output.answer if output is not None else None)


def _known(data, metric: str) -> None:
    if metric not in data.columns:
        raise ConfigError(f"run {data.id[:12]} has no metric '{metric}'. Its metrics: {', '.join(data.columns)}")


def _system(data, system: str) -> str:
    if system not in data.systems:
        raise ConfigError(f"run {data.id[:12]} has no system '{system}'. Its systems: {', '.join(data.systems)}")
    return system


def _single(data, system: str | None) -> str:
    if system is not None:
        return _system(data, system)
    if len(data.systems) != 1:
        raise ConfigError(
            f"run {data.id[:12]} has systems {', '.join(data.systems)}; name the one to compare with system=..."
        )
    return data.systems[0]


def _bound(value: float | None) -> str:
    return "open" if value is None else f"{value:+.4f}"


def _num(value: float | None) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"


def _short(text: Any, width: int = 100) -> str:
    text = " ".join(str(text if text is not None else "(no answer)").split())
    return text if len(text) <= width else text[: width - 3] + "..."
