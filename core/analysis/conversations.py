"""Conversations in a stored run: which samples are turns of which conversation, and quality by turn depth and by
answerability class, with intervals that resample whole conversations.

A sample is a turn when it carries a ``conversation_id`` (:class:`ragassay.models.Sample`); its ``turn`` is its
1-based position among the user's turns. Turns of one conversation are not independent (a lost context at turn 2
shows at turns 3 and 4), so every interval here is a **cluster bootstrap**: each resample draws whole
conversations with replacement (Davison & Hinkley 1997, Bootstrap Methods and their Application, section 3.8,
"resampling stage 1 only" for two-stage data; Field & Welsh 2007, "Bootstrapping clustered data", JRSS B 69(3),
the cluster bootstrap), and the statistic is the mean over every scored turn the drawn conversations hold (a
ratio of sums, so a conversation weighs by its scored turns). Means take the BCa interval of every turn-level mean
(:func:`ragassay.analysis.clustered.cluster_mean_ci`); the ratios of :mod:`.conversations_answerability` take the
percentile interval (:func:`percentile_interval`). Default 95%, 1000 resamples, drawn by
:func:`ragassay.analysis.bootstrap.resample_indices` with the given seed (the one generator of every draw): the
same run and seed give the same numbers in every process. Fewer than two conversations with a scored turn give no
interval, and say so.

- :func:`conversation_turns`: conversation id -> the positions of its turns, in turn order;
- :func:`by_depth`: per system, metric and turn index, the mean with its interval, n turns and n conversations;
- :func:`by_answerability`: the same per answerability class (``Sample.answerability``);
- :mod:`.conversations_answerability`: answerability behaviour (confusion, per-class recall, balanced accuracy);
- :mod:`.conversations_failures`: the first failing turn of each conversation, and per-system summaries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from .bootstrap import counts_of, resample_indices
from .breakdown import check_metrics
from .clustered import cluster_mean_ci, clusters_of

UNKNOWN = "(unknown)"  # the answerability class of a turn whose label is not known
DEFAULT_RESAMPLES = 1000


@dataclasses.dataclass(frozen=True)
class ClusterInterval:
    """A statistic of turns with its cluster-bootstrap interval: n turns (unscored included), n scored, n
    conversations holding a scored turn; ``ci_low``/``ci_high`` None exactly when ``reason`` says why."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_turns: int
    n_scored: int
    n_conversations: int
    reason: str | None = None


@dataclasses.dataclass(frozen=True)
class GroupRow:
    """One (system, metric, group) cell of a conversation breakdown: the group is a turn index or a class."""

    system: str
    metric: str
    group: str
    stat: ClusterInterval


@dataclasses.dataclass(frozen=True)
class ConversationBreakdown:
    """Quality of a run's turns by one grouping (``by``: "turn" or "answerability"), groups in order."""

    by: str
    groups: list[str]
    rows: list[GroupRow]
    conversations: int  # conversations in the run
    turns: int  # turns in the run
    seed: int
    n_resamples: int


def is_turn_run(run) -> bool:
    """Whether some sample of ``run`` (:class:`ragassay.results.RunData`) is a conversation turn."""
    return any(sample.conversation_id is not None for sample in run.samples)


def conversation_turns(run) -> dict[str, list[int]]:
    """Conversation id -> the positions (in the run's sample order) of its turns, ordered by ``turn``;
    conversations in the order of their first turn in the run."""
    found: dict[str, list[int]] = {}
    for index, sample in enumerate(run.samples):
        if sample.conversation_id is not None:
            found.setdefault(sample.conversation_id, []).append(index)
    samples = run.samples
    return {cid: sorted(positions, key=lambda i: (samples[i].turn, i)) for cid, positions in found.items()}


def cluster_codes(run) -> np.ndarray:
    """Per sample of ``run``, the index of its cluster (its conversation, else the sample itself)."""
    codes: dict[str, int] = {}
    return np.array([codes.setdefault(sample.cluster, len(codes)) for sample in run.samples], dtype=np.int64)


def cluster_mean(
    values: np.ndarray, clusters: np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level=0.95
) -> ClusterInterval:
    """The mean of the scored ``values`` (NaN: unscored) with the cluster-bootstrap interval of every turn-level
    mean in ragassay (:func:`ragassay.analysis.clustered.cluster_mean_ci`: whole conversations resampled, BCa;
    ``clusters``: one label per value)."""
    values, clusters = np.asarray(values, dtype=float), np.asarray(clusters)
    scored = ~np.isnan(values)
    n_turns, n_scored = len(values), int(scored.sum())
    if not n_scored:
        return ClusterInterval(None, None, None, n_turns, 0, 0, "no scored turn")
    grouping = clusters_of([str(label) for label in clusters[scored]])
    (mean,) = cluster_mean_ci(values[scored], grouping, n_resamples=n_resamples, confidence_level=level, seed=seed)
    return ClusterInterval(mean.mean, mean.ci_low, mean.ci_high, n_turns, n_scored, grouping.count, mean.reason)


def percentile_interval(
    statistic: Callable[[np.ndarray], np.ndarray], n_clusters: int, n_resamples: int, seed: int, level: float
) -> tuple[float | None, float | None, str | None]:
    """(low, high, None) of the percentile interval of ``statistic``, or (None, None, why there is none).

    ``statistic`` is given the (rows, n_clusters) counts of a batch of resamples (entry [b, c]: how often resample
    b drew conversation c) and returns one value per resample (NaN where undefined: dropped). The resamples are
    :func:`ragassay.analysis.bootstrap.resample_indices` of the conversations (the draws of
    ``generator(seed).integers(0, n_clusters, (n_resamples, n_clusters))``, in batches, kept for the next cell
    over as many conversations)."""
    if n_clusters < 2:
        return None, None, f"fewer than 2 conversations ({n_clusters})"
    if n_resamples < 2:
        return None, None, f"n_resamples must be at least 2, got {n_resamples}"
    batches = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for index in resample_indices(n_clusters, n_resamples, seed):
            batches.append(np.asarray(statistic(counts_of(index, n_clusters)), dtype=float))
    theta = np.concatenate(batches)
    theta = theta[~np.isnan(theta)]
    if len(theta) < 2:
        return None, None, "fewer than 2 resamples have a value"
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(theta, [alpha, 1.0 - alpha])
    return float(low), float(high), None


def by_depth(run, metrics: list[str] | None = None, *, n_resamples=DEFAULT_RESAMPLES, seed: int = 0):
    """Quality of ``run``'s turns by turn index (1, 2, ...): per system, metric (default: every column) and
    depth, the mean with its cluster-bootstrap interval, n turns and n conversations (a
    :class:`ConversationBreakdown`; samples that are not turns are left out)."""
    samples = run.samples
    groups = {i: str(s.turn) for i, s in enumerate(samples) if s.conversation_id is not None}
    order = [str(t) for t in sorted({int(g) for g in groups.values()})]
    return _breakdown(run, "turn", groups, order, metrics, n_resamples, seed)


def by_answerability(run, metrics: list[str] | None = None, *, n_resamples=DEFAULT_RESAMPLES, seed: int = 0):
    """Quality of ``run``'s turns by answerability class (``Sample.answerability``; ``(unknown)`` where none is
    given), as :func:`by_depth` gives it by turn index; classes in the order of
    :data:`ragassay.models.ANSWERABILITY`."""
    from ..models import ANSWERABILITY

    samples = run.samples
    groups = {i: s.answerability or UNKNOWN for i, s in enumerate(samples) if s.conversation_id is not None}
    order = [c for c in (*ANSWERABILITY, UNKNOWN) if c in set(groups.values())]
    return _breakdown(run, "answerability", groups, order, metrics, n_resamples, seed)


def _breakdown(run, by: str, groups: dict[int, str], order: list[str], metrics, n_resamples: int, seed: int):
    metrics = check_metrics(run.columns, metrics)
    clusters = cluster_codes(run)
    labels = np.array([groups.get(i, "") for i in range(len(run.question_ids))], dtype=object)
    masks = {group: labels == group for group in order}
    rows = []
    for system in run.systems:
        for metric in metrics:
            values = run.values(system, metric)
            for group in order:
                mask = masks[group]
                stat = cluster_mean(values[mask], clusters[mask], n_resamples=n_resamples, seed=seed)
                rows.append(GroupRow(system, metric, group, stat))
    conversations = len({run.samples[i].conversation_id for i in groups})
    return ConversationBreakdown(by, order, rows, conversations, len(groups), seed, n_resamples)
