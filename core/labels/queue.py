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

``order="active"`` (``ragassay label --order active --sample BUDGET``) spends the labels where they narrow the
estimate most (active statistical inference: Zrnic and Candes, "Active statistical inference", ICML 2024, section
3 and eq. (3)). Each item i gets the judge's uncertainty u_i about it (:func:`item_uncertainty`: for calibrated
scores p of a binary judge sqrt(p (1 - p)); over several judges or ``run --repeat`` repeats their mean p, whose
p (1 - p) is the mean uncertainty plus their spread; for a pair, the uncertainty of the paired difference
sqrt(u_A^2 + u_B^2)). Every item is then drawn on its own with probability (:func:`labelling_probabilities`)::

    pi_i = (1 - tau) * BUDGET * u_i / sum_j u_j  +  tau * BUDGET / N        (tau = UNIFORM_SHARE = 0.1)

capped at 1 (the excess spread over the others), so about BUDGET items are drawn, every pi_i > 0, and the
estimate that weights each label by 1 / pi_i (:func:`ragassay.analysis.ppi.ppi_active_mean`) stays unbiased
however wrong the judge is. Each queued item carries its pi_i, stored with its label (``Label.probability``).
The drawn items are queued in the seed's random order, so a queue stopped early is still a random part of the
draw. Draws depend on the seed, the judge scores and the budget only.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from .rubrics import Rubric


@dataclasses.dataclass(frozen=True)
class Item:
    """One thing to label: one system's answer to a sample, or two systems' answers (first, second as shown)."""

    sample_id: str
    system: str | None = None
    systems: tuple[str, str] | None = None
    probability: float | None = None  # an active queue's probability of drawing it (None: random order)

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
    order: str = "random",
    uncertainty: Mapping[tuple[str, str], float] | None = None,
) -> list[Item]:
    """The queue's items, in order.

    :param answered: (system, sample id) of every ok output of the run.
    :param samples: the run's sample ids in dataset order; ``systems``: the systems to label, in run order (two
        for a pairwise rubric).
    :param sample: how many items (None: all); with ``order="active"`` the label budget (required).
    :param order: ``random`` (the first ``sample`` of a seeded shuffle) or ``active`` (module docstring).
    :param uncertainty: (system, sample id) -> the judge's uncertainty about that answer (:func:`item_uncertainty`);
        an answer without one counts as most uncertain (0.5). Used by ``active`` only.
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
    if order == "active":
        return _draw_active(items, sample, seed, uncertainty or {})
    if order != "random":
        raise ConfigError(f"unknown queue order '{order}'; choose one of {', '.join(ORDERS)}")
    return items if sample is None else items[:sample]


ORDERS = ("random", "active")
UNIFORM_SHARE = 0.1  # tau: the share of the budget spread uniformly, so that every item can be drawn
UNKNOWN_UNCERTAINTY = 0.5  # an answer no judge scored: as uncertain as a binary score can be


def item_uncertainty(scores: Sequence[float]) -> float:
    """The judge's uncertainty about one answer from its scores in [0, 1] (several judges or repeats): with p the
    mean score, sqrt(p (1 - p)), the standard deviation of a calibrated judge's error on a binary label (for
    several scores: their mean p (1 - p) plus their variance). No score: :data:`UNKNOWN_UNCERTAINTY`."""
    found = [min(max(float(s), 0.0), 1.0) for s in scores if s is not None and not math.isnan(s)]
    if not found:
        return UNKNOWN_UNCERTAINTY
    p = math.fsum(found) / len(found)
    return math.sqrt(p * (1.0 - p))


def labelling_probabilities(
    uncertainty: Sequence[float], budget: float, uniform_share: float = UNIFORM_SHARE
) -> list[float]:
    """Each item's probability of being labelled for an expected ``budget`` labels: proportional to its
    uncertainty, mixed with the uniform ``budget / N`` at ``uniform_share`` (module docstring), capped at 1 with
    the excess spread over the other items in proportion; they sum to ``min(budget, N)``."""
    count = len(uncertainty)
    if count == 0:
        return []
    if budget <= 0 or not 0.0 < uniform_share <= 1.0:
        raise ValueError(f"budget must be positive and uniform_share in (0, 1], got {budget} and {uniform_share}")
    budget = min(float(budget), float(count))
    total = math.fsum(uncertainty)
    weights = [(1 - uniform_share) * u / total + uniform_share / count if total > 0 else 1 / count for u in uncertainty]
    probabilities = [0.0] * count
    free, left = set(range(count)), budget
    while free:
        scale = left / math.fsum(weights[i] for i in free)
        capped = {i for i in free if weights[i] * scale >= 1.0}
        if not capped:
            for i in free:
                probabilities[i] = weights[i] * scale
            break
        for i in capped:
            probabilities[i] = 1.0
        free -= capped
        left -= len(capped)
    return probabilities


def _draw_active(
    items: list[Item], budget: int | None, seed: int, uncertainty: Mapping[tuple[str, str], float]
) -> list[Item]:
    """The items an active queue holds: each drawn on its own with its probability, in ``items``' order."""
    if budget is None:
        raise ConfigError("--order active needs --sample N: the label budget the draw spends (about N items)")

    def doubt(item: Item) -> float:
        per = [uncertainty.get((name, item.sample_id), UNKNOWN_UNCERTAINTY) for name in item.shown_systems]
        return math.sqrt(math.fsum(u * u for u in per))

    probabilities = labelling_probabilities([doubt(item) for item in items], budget)
    draw = random.Random(f"{seed}\x1factive")
    return [dataclasses.replace(item, probability=p) for item, p in zip(items, probabilities) if draw.random() < p]


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
    run: Any,
    rubric: Rubric,
    *,
    sample: int | None,
    seed: int,
    systems: Sequence[str] | None = None,
    order: str = "random",
    judges: Sequence[str] | None = None,
) -> list[Item]:
    """The queue's items over a stored run (:func:`choose_items` on its samples and answered outputs). ``run``: the
    run as the read model gives it (:func:`ragassay.results.read_run`): its systems, samples, outputs and, for
    ``order="active"``, the scores of ``judges`` (None: every judge of the run; all repeats)."""
    names = pick_systems(list(run.systems), systems, rubric)
    answered = [key for key, output in run.outputs.items() if output.ok]
    doubt = run_uncertainty(run, names, judges) if order == "active" else None
    return choose_items(
        answered, list(run.question_ids), names, rubric, sample=sample, seed=seed, order=order, uncertainty=doubt
    )


def run_uncertainty(run: Any, systems: Sequence[str], judges: Sequence[str] | None) -> dict[tuple[str, str], float]:
    """(system, sample id) -> :func:`item_uncertainty` of the scores of ``judges`` (None: all; every repeat)."""
    chosen = list(run.judges) if judges is None else list(judges)
    unknown = [j for j in chosen if j not in run.judges]
    if unknown:
        known = ", ".join(run.judges) or "none"
        raise ConfigError(f"--judge: the run has no judge {', '.join(map(repr, unknown))} (its judges: {known})")
    repeats = int(run.score_table.repeat.max()) + 1 if len(run.score_table) else 1
    found: dict[tuple[str, str], float] = {}
    for system in systems:
        columns = [run.values(system, f"judge:{j}", r) for j in chosen for r in range(repeats)]
        for i, sample_id in enumerate(run.question_ids):
            found[(system, sample_id)] = item_uncertainty([column[i] for column in columns])
    return found
