"""Answerability behaviour of a run's turns: did each system answer, refuse or ask for clarification, against the
turn's label (answerable, unanswerable, underspecified, partial)?

It reads the values of an answerability metric (``answerability_behaviour`` by default, found by its label or
its component name): value 1 where the behaviour was the one the label expects, 0 where not, with details
``{"behaviour": "answer" | "refuse" | "clarify", "label": <class>, "expected": <behaviour>}``. A turn's class is
its details' ``label``, else its ``Sample.answerability``.

Per system: the confusion (class x behaviour counts of the scored turns), each class's **recall** (the share of
its turns with the expected behaviour) and the **balanced accuracy** (the mean of the recalls of the known
classes; Brodersen et al. 2010, "The balanced accuracy and its posterior distribution", ICPR, Eq. 1), each with
a 95% cluster-bootstrap percentile interval that resamples whole conversations (:mod:`.conversations`; one draw
of conversations serves every class and the balanced accuracy, which in a resample averages the classes that
resample holds).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ..errors import ConfigError
from .conversations import DEFAULT_RESAMPLES, UNKNOWN, ClusterInterval, percentile_interval

BEHAVIOUR = "answerability_behaviour"
BEHAVIOURS = ("answer", "refuse", "clarify")


@dataclasses.dataclass(frozen=True)
class ClassRecall:
    """One answerability class: the share of its scored turns with the expected behaviour, and its interval."""

    label: str
    recall: ClusterInterval


@dataclasses.dataclass(frozen=True)
class AnswerabilityScore:
    """One system's answerability behaviour: confusion ``counts[label][behaviour]``, per-class recall, balanced
    accuracy (over the known classes), and how many turns the metric left unscored."""

    system: str
    metric: str
    labels: list[str]
    behaviours: list[str]
    counts: dict[str, dict[str, int]]
    recalls: list[ClassRecall]
    balanced_accuracy: ClusterInterval
    unscored: int


def metric_columns(run, name: str) -> list[str]:
    """The metric labels of ``run`` that are ``name`` or whose stored component name is ``name``."""
    specs = run.info.spec.get("metrics") or {}
    return [m for m in run.metrics if m == name or (specs.get(m) or {}).get("name") == name]


def behaviour_column(run, metric: str | None = None) -> str | None:
    """``metric`` checked against the run's columns, else the run's answerability behaviour column (None: none)."""
    if metric is not None:
        if metric not in run.metrics:
            raise ConfigError(f"metric {metric!r} is not in this run; it scored: {', '.join(run.metrics) or 'nothing'}")
        return metric
    found = metric_columns(run, BEHAVIOUR)
    return found[0] if found else None


def answerability(
    run, metric: str | None = None, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> list[AnswerabilityScore]:
    """Per system of ``run``, its :class:`AnswerabilityScore` from the behaviour metric ``metric`` (default: the
    run's ``answerability_behaviour``); empty when the run has no such metric."""
    column = behaviour_column(run, metric)
    if column is None:
        return []
    samples, position = run.samples, run.position
    turns: dict[str, list[tuple[int, str, str, float]]] = {s: [] for s in run.systems}
    unscored = dict.fromkeys(run.systems, 0)
    for record in run.records(kind="metric", label=column, repeat=0):
        index = position.get(record.question_id)
        if index is None or record.system not in turns:
            continue
        if record.value is None:
            unscored[record.system] += 1
            continue
        details = record.details if isinstance(record.details, dict) else {}
        label = str(details.get("label") or samples[index].answerability or UNKNOWN)
        behaviour = str(details.get("behaviour") or UNKNOWN)
        turns[record.system].append((index, label, behaviour, float(record.value)))
    return [_score(run, s, column, turns[s], unscored[s], n_resamples, seed) for s in run.systems]


def _score(run, system: str, column: str, turns: list, unscored: int, n_resamples: int, seed: int):
    from ..models import ANSWERABILITY

    labels = [c for c in (*ANSWERABILITY, UNKNOWN) if any(t[1] == c for t in turns)]
    labels += sorted({t[1] for t in turns} - set(labels))
    behaviours = [b for b in BEHAVIOURS if any(t[2] == b for t in turns)]
    behaviours += sorted({t[2] for t in turns} - set(behaviours))
    counts = {label: dict.fromkeys(behaviours, 0) for label in labels}
    for _, label, behaviour, _ in turns:
        counts[label][behaviour] += 1
    clusters = [run.samples[t[0]].cluster for t in turns]
    codes = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
    hits = np.zeros((len(codes), len(labels)))
    totals = np.zeros((len(codes), len(labels)))
    for (_, label, _, value), cluster in zip(turns, clusters):
        hits[codes[cluster], labels.index(label)] += value
        totals[codes[cluster], labels.index(label)] += 1
    recalls = [ClassRecall(label, _recall(hits, totals, j, n_resamples, seed)) for j, label in enumerate(labels)]
    known = [j for j, label in enumerate(labels) if label != UNKNOWN]
    balanced = _balanced(hits, totals, known, n_resamples, seed)
    return AnswerabilityScore(system, column, labels, behaviours, counts, recalls, balanced, unscored)


def _recall(hits: np.ndarray, totals: np.ndarray, j: int, n_resamples: int, seed: int) -> ClusterInterval:
    holding = np.flatnonzero(totals[:, j] > 0)
    h, t = hits[holding, j], totals[holding, j]
    n = int(t.sum())
    if not n:
        return ClusterInterval(None, None, None, 0, 0, 0, "no scored turn")
    value = float(h.sum() / n)
    low, high, reason = percentile_interval(lambda drawn: (drawn @ h) / (drawn @ t), len(h), n_resamples, seed, 0.95)
    return ClusterInterval(value, low, high, n, n, len(h), reason)


def _balanced(hits: np.ndarray, totals: np.ndarray, known: list[int], n_resamples: int, seed: int):
    h, t = hits[:, known], totals[:, known]
    holding = np.flatnonzero(t.sum(1) > 0)
    h, t = h[holding], t[holding]
    n = int(t.sum())
    if not n:
        return ClusterInterval(None, None, None, 0, 0, 0, "no scored turn of a known class")
    present = t.sum(0) > 0
    value = float(np.mean(h.sum(0)[present] / t.sum(0)[present]))

    def statistic(drawn: np.ndarray) -> np.ndarray:
        rates = (drawn @ h) / (drawn @ t)  # (resamples, classes), NaN where a resample lacks the class
        return np.nanmean(rates, axis=1)  # NaN (dropped) where a resample holds no known class

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's "mean of empty slice" for those resamples
        low, high, reason = percentile_interval(statistic, len(h), n_resamples, seed, 0.95)
    return ClusterInterval(value, low, high, n, n, len(h), reason)
