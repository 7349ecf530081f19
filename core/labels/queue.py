"""The blind labelling queue of ``ragassay label``: which items of a run an annotator labels, in which order,
and where the queue stands.

The items are chosen and ordered by the seed alone (never by the annotator), so two annotators with the same
``--sample N --seed S`` label the same items in the same order: every (sample, system) answer of the chosen
systems, or for a pairwise rubric every sample both systems answered, shuffled with ``random.Random(seed)``; the
first N are the queue. A pair is shown in an order drawn from the seed and the sample id, recorded with each label
as ``systems`` (first, second).

Nothing here reads a store: the run comes from the read model (:func:`ragassay.results.read_run`), and where the
queue stands from the annotator's labels (:func:`ragassay.results.read_labels`, read on every request by the
labelling app: nothing is kept in memory). It resumes after the item labelled last, and comes back to skipped
items once it reaches the end.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError
from .rubrics import Rubric


@dataclasses.dataclass(frozen=True)
class Item:
    """One thing to label: one system's answer to a sample, or two systems' answers (first, second as shown)."""

    sample_id: str
    system: str | None = None
    systems: tuple[str, str] | None = None

    @property
    def key(self) -> str:
        """The same as :attr:`ragassay.labels.Label.item_key` of a label on this item."""
        target = [self.system] if self.system is not None else sorted(self.systems or ())
        return json.dumps([self.sample_id, *target], ensure_ascii=False)

    @property
    def shown_systems(self) -> list[str]:
        """The systems whose answers are shown, in the order shown."""
        return [self.system] if self.system is not None else list(self.systems or ())


def choose_items(
    answered: Sequence[tuple[str, str]],
    samples: Sequence[str],
    systems: Sequence[str],
    rubric: Rubric,
    *,
    sample: int | None,
    seed: int,
) -> list[Item]:
    """The queue's items, in order.

    :param answered: (system, sample id) of every ok output of the run.
    :param samples: the run's sample ids in dataset order; ``systems``: the systems to label, in run order (two
        for a pairwise rubric).
    :param sample: how many items (None: all).
    """
    have = set(answered)
    if rubric.pairwise:
        first, second = systems
        items = [
            Item(s, systems=_pair_order(first, second, s, seed))
            for s in samples
            if (first, s) in have and (second, s) in have
        ]
    else:
        items = [Item(s, system=name) for s in samples for name in systems if (name, s) in have]
    random.Random(seed).shuffle(items)
    return items if sample is None else items[:sample]


def _pair_order(first: str, second: str, sample_id: str, seed: int) -> tuple[str, str]:
    """The order a pair is shown in: drawn from the seed and the sample id (the same in every process)."""
    return (first, second) if random.Random(f"{seed}\x1f{sample_id}").random() < 0.5 else (second, first)


def pick_systems(run_systems: Sequence[str], wanted: Sequence[str] | None, rubric: Rubric) -> list[str]:
    """The systems to label: ``wanted`` (checked against the run) or all; exactly two for a pairwise rubric."""
    chosen = list(wanted) if wanted else list(run_systems)
    unknown = [s for s in chosen if s not in run_systems]
    if unknown:
        raise ConfigError(
            f"--systems: the run has no system {', '.join(map(repr, unknown))}; its systems: {', '.join(run_systems)}"
        )
    if len(set(chosen)) != len(chosen):
        raise ConfigError(f"--systems names a system twice: {', '.join(chosen)}")
    if rubric.pairwise and len(chosen) != 2:
        raise ConfigError(
            f"the pairwise rubric '{rubric.name}' compares two systems; the run has {len(chosen)} "
            f"({', '.join(chosen)}): give two with --systems A,B"
        )
    return [s for s in run_systems if s in chosen] if not rubric.pairwise else chosen


@dataclasses.dataclass
class QueueState:
    """Where an annotator stands in a queue: the labels that count, by item key, and the item labelled last."""

    values: dict[str, float]
    last: int | None  # index of the item labelled most recently (None: nothing labelled yet)

    @property
    def done(self) -> int:
        """How many items are labelled."""
        return len(self.values)


def queue_state(items: Sequence[Item], labels: Sequence[Any]) -> QueueState:
    """The state of a queue from the annotator's labels that count (in the order given, oldest first)."""
    index = {item.key: i for i, item in enumerate(items)}
    mine = [label for label in labels if label.item_key in index]
    values = {label.item_key: label.value for label in mine}
    return QueueState(values, index[mine[-1].item_key] if mine else None)


def next_index(items: Sequence[Item], state: QueueState, after: int | None) -> int | None:
    """The next item to label after position ``after`` (None: after the item labelled last, or from the start),
    wrapping round to items skipped before; None when every item is labelled."""
    if after is None:
        after = -1 if state.last is None else state.last
    count = len(items)
    for step in range(1, count + 1):
        i = (after + step) % count
        if items[i].key not in state.values:
            return i
    return None


def run_items(
    run: Any, rubric: Rubric, *, sample: int | None, seed: int, systems: Sequence[str] | None = None
) -> list[Item]:
    """The queue's items over a stored run (:func:`choose_items` on its samples and answered outputs). ``run``: the
    run as the read model gives it (:func:`ragassay.results.read_run`): its systems, samples and outputs."""
    names = pick_systems(list(run.systems), systems, rubric)
    answered = [key for key, output in run.outputs.items() if output.ok]
    return choose_items(answered, list(run.question_ids), names, rubric, sample=sample, seed=seed)
