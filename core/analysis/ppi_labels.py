"""People's labels joined to a run's metric values, the inputs of prediction-powered verdicts (:mod:`.ppi_verdicts`).

``--labelled METRIC=RUBRIC`` (``[evaluation] labelled = { METRIC = "RUBRIC" }``) decides METRIC on people's labels
of RUBRIC: for an item (one system's answer to one sample) Y is the label, the mean of the annotators' latest
labels of it, and f the metric's stored value for that output, the judge's prediction of Y. For a pairwise rubric
the item is a sample's pair of answers and Y the preference of one system over the other.

f is put on the label's scale by the fixed affine map that sends the metric's declared range onto the rubric's
range (best to best: a lower-is-better metric is turned round), so a judge that agrees with people has f close to
Y and PPI++'s lambda (clipped to [0, 1]) can use it fully; a metric with an open range is used as it is. The map
does not depend on the data, so every estimate stays unbiased for E[Y] whatever f is.

Which label belongs to which output is decided in one place, :func:`matched_items`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from ..errors import ConfigError
from .human_labels import HumanLabel, Rubric, latest, rubric_of


@dataclasses.dataclass(frozen=True)
class Labelled:
    """One metric decided on people's labels of one rubric (``METRIC=RUBRIC``)."""

    metric: str
    rubric: str


def parse_labelled(specs: Iterable[str]) -> list[Labelled]:
    """``--labelled METRIC=RUBRIC`` values as :class:`Labelled` (a metric named twice is a ConfigError)."""
    out: dict[str, Labelled] = {}
    for spec in specs:
        metric, sep, rubric = str(spec).partition("=")
        metric, rubric = metric.strip(), rubric.strip()
        if not sep or not metric or not rubric:
            raise ConfigError(f"--labelled {spec!r}: give METRIC=RUBRIC, e.g. --labelled judge:match=correct")
        if metric in out:
            raise ConfigError(f"--labelled names {metric} twice; give each metric one rubric")
        out[metric] = Labelled(metric, rubric)
    return list(out.values())


def labelled_of(mapping: Mapping[str, str] | None) -> list[Labelled]:
    """``[evaluation] labelled`` ({METRIC: RUBRIC}) as :class:`Labelled`."""
    return [Labelled(str(m), str(r)) for m, r in (mapping or {}).items()]


def check_labelled(run, labelled: Sequence[Labelled], labels: Sequence[HumanLabel], source: str) -> dict[str, Rubric]:
    """Each labelled metric's rubric; a metric the run did not score, or a rubric with no label in ``labels``,
    is a ConfigError that names it and lists the known ones."""
    rubrics = {}
    have = sorted({label.rubric for label in labels})
    known = ", ".join(have) or "- (no labels: label outputs with ragassay label, or give --labels FILE)"
    for item in labelled:
        if item.metric not in run.columns:
            raise ConfigError(
                f"--labelled {item.metric}={item.rubric}: run {run.id[:12]} has no metric {item.metric}. "
                f"Its metrics and judges: {', '.join(run.columns) or '-'}"
            )
        if item.rubric not in have:
            raise ConfigError(
                f"--labelled {item.metric}={item.rubric}: no label of rubric {item.rubric} in {source}. "
                f"Its rubrics: {known}"
            )
        rubrics[item.metric] = rubric_of(item.rubric)
    return rubrics


@dataclasses.dataclass(frozen=True)
class Matched:
    """The labels of one item on one run: their value, how the item was drawn, and which labels they are."""

    value: float  # the mean of the annotators' latest labels
    probability: float | None  # the active queue's probability of drawing the item; None: a random-order queue
    draws: frozenset  # (annotator, labelled_at, digest) of each label: one label reused on two runs is one draw


def matched_items(labels: Iterable[HumanLabel], run, rubric: str) -> dict[tuple, Matched]:
    """THE join of labels to outputs: the labels of ``rubric`` on ``run``'s stored outputs, as item ->
    :class:`Matched`.

    A label belongs to an output when it names the output's run, system and sample. Which labels count on a run
    (the answer they judged is the run's answer, or they were given on it) is decided before, by
    :func:`ragassay.labels.reuse.reusable_labels`, which addresses every label it keeps to the run. Items: (system,
    sample_id) for binary and ordinal rubrics; (sample_id, a, b), a and b in name order, for a preference, whose
    value rates b against a (:attr:`HumanLabel.item_value`). The annotators' labels of one item drawn with
    different probabilities (different queues) are a ConfigError: the item has no one probability."""
    found: dict[tuple, list[HumanLabel]] = {}
    for label in latest(x for x in labels if x.rubric == rubric and x.run_id == run.id):
        systems = (label.system,) if label.systems is None else tuple(label.systems)
        if all(run.outputs.get((s, label.sample_id)) is not None for s in systems):
            found.setdefault(label.item, []).append(label)
    return {item: _matched(item, group, run) for item, group in found.items()}


def _matched(item: tuple, group: list[HumanLabel], run) -> Matched:
    probabilities = {x.probability for x in group}
    if len(probabilities) > 1:
        shown = ", ".join("random order" if p is None else f"{p:.4g}" for p in sorted(probabilities, key=str))
        raise ConfigError(
            f"the labels of {' / '.join(map(str, item))} on run {run.id[:12]} were drawn with different "
            f"probabilities ({shown}): one item has one design. Decide on one queue's labels (--labels FILE)."
        )
    value = sum(x.item_value for x in group) / len(group)
    draws = frozenset((x.annotator, x.labelled_at, x.output_digest) for x in group)
    return Matched(value, next(iter(probabilities)), draws)


@dataclasses.dataclass(frozen=True)
class Scale:
    """The fixed map of a metric's values onto a rubric's scale: ``offset + factor * value``."""

    offset: float
    factor: float

    def of(self, value: float) -> float:
        return self.offset + self.factor * value


def judge_scale(run, metric: str, rubric: Rubric) -> Scale:
    """The affine map of ``metric``'s declared range onto ``rubric``'s range, best to best (module docstring); a
    pairwise rubric maps a difference of the metric (its range's width either way) onto the preference scale."""
    low, high = run.value_range(metric)
    sign = -1.0 if run.direction(metric) == "lower" else 1.0
    values = rubric.values or (0.0, 1.0)
    if low is None or high is None or high <= low:
        return Scale(0.0, sign)
    if rubric.kind == "pairwise":
        return Scale(0.0, sign * max(abs(v) for v in values) / (high - low))
    factor = (max(values) - min(values)) / (high - low)
    if sign > 0:
        return Scale(min(values) - factor * low, factor)
    return Scale(max(values) + factor * low, -factor)
