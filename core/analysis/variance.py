"""Run-to-run variance of LLM judges (``ragassay run --repeat N``): how much does a system's score move when the
same outputs are judged again, and is the difference between two systems larger than that?

The groundedness blog (seeds/001) reports that five runs of one evaluation gave 88-92%: a 4-point spread from
the judge alone. For one system and one repeated metric (or judge score), with values ``v[q, r]`` of sample
``q`` at repeat ``r = 0..N-1``:

- ``Q`` = the samples scored (not unscored) in every repeat, so each repeat averages the same samples and the
  spread is the judge's, not a change of sample set;
- repeat mean ``m_r = (1/|Q|) * sum_{q in Q} v[q, r]``;
- ``mean = (1/N) * sum_r m_r``; ``min = min_r m_r``; ``max = max_r m_r``;
- standard deviation ``sd = sqrt( sum_r (m_r - mean)^2 / (N - 1) )`` (sample standard deviation; None for N = 1).

Two systems A and B of one run: ``difference = mean_B - mean_A``; ``spread = max(max_A - min_A, max_B - min_B)``
(the larger run-to-run range); the difference **exceeds the run-to-run spread** when the ranges
``[min_A, max_A]`` and ``[min_B, max_B]`` do not overlap, i.e. every repeat of one system scores above every
repeat of the other. Pure functions: no store, no I/O.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any


@dataclasses.dataclass(frozen=True)
class Spread:
    """One system's repeated metric: the mean of each repeat and their mean, range and standard deviation."""

    system: str
    label: str
    repeats: int
    n: int  # samples scored in every repeat
    means: tuple[float, ...]  # m_r, r = 0..repeats-1 (empty when n == 0)
    mean: float | None
    low: float | None
    high: float | None
    sd: float | None

    @property
    def range(self) -> float | None:
        """``max - min`` of the repeat means."""
        return None if self.low is None else self.high - self.low


@dataclasses.dataclass(frozen=True)
class Separation:
    """System B against system A on one repeated metric."""

    label: str
    system_a: str
    system_b: str
    difference: float | None  # mean_B - mean_A
    spread: float | None  # the larger of the two run-to-run ranges
    exceeds: bool  # the two [min, max] ranges do not overlap


def spread(system: str, label: str, values: Mapping[tuple[str, int], float | None]) -> Spread:
    """The :class:`Spread` of ``values``: ``(question_id, repeat) -> value`` (None = unscored)."""
    repeats = sorted({r for _, r in values})
    questions = sorted({q for q, _ in values})
    common = [q for q in questions if all(values.get((q, r)) is not None for r in repeats)]
    if not common:
        return Spread(system, label, len(repeats), 0, (), None, None, None, None)
    means = tuple(math.fsum(values[(q, r)] for q in common) / len(common) for r in repeats)
    mean = math.fsum(means) / len(means)
    sd = math.sqrt(math.fsum((m - mean) ** 2 for m in means) / (len(means) - 1)) if len(means) > 1 else None
    return Spread(system, label, len(repeats), len(common), means, mean, min(means), max(means), sd)


def separation(a: Spread, b: Spread) -> Separation:
    """Whether B's difference to A exceeds the run-to-run spread (see the module docstring)."""
    if a.mean is None or b.mean is None:
        return Separation(a.label, a.system, b.system, None, None, False)
    disjoint = b.low > a.high or a.low > b.high
    return Separation(a.label, a.system, b.system, b.mean - a.mean, max(a.range, b.range), disjoint)


def spreads(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], Spread]:
    """(system, label) -> :class:`Spread` from rows with ``system``, ``question_id``, ``label``, ``repeat`` and
    ``value`` (as :meth:`ragassay.store.ResultsStore.repeat_rows` returns them); only labels with a repeat > 0."""
    grouped: dict[tuple[str, str], dict[tuple[str, int], float | None]] = {}
    for row in rows:
        grouped.setdefault((row["system"], row["label"]), {})[(row["question_id"], row["repeat"])] = row["value"]
    return {
        key: spread(key[0], key[1], values) for key, values in sorted(grouped.items()) if any(r > 0 for _, r in values)
    }


@dataclasses.dataclass(frozen=True)
class SpreadRow:
    """One system's repeated metric in a run, and (for a system other than the reference) its separation."""

    label: str
    system: str
    spread: Spread
    versus: Separation | None
    reference: str


def repeat_rows(run) -> list[dict[str, Any]]:
    """The repeated columns of ``run`` (:class:`ragassay.results.RunData`) as :func:`spreads` takes them."""
    return [
        {"system": s.system, "question_id": s.question_id, "label": s.column, "repeat": s.repeat, "value": s.value}
        for s in run.repeats()
    ]


def run_spreads(run, reference: str) -> list[SpreadRow]:
    """The spread of every repeated metric of ``run`` (:class:`ragassay.results.RunData`), each system against
    ``reference`` (the run's first system when it is not one of the run's); empty without repeats."""
    found = spreads(repeat_rows(run))
    reference = reference if reference in run.systems else run.systems[0]
    order = {name: i for i, name in enumerate(run.systems)}
    result = []
    for (system, label), s in sorted(found.items(), key=lambda item: (item[0][1], order.get(item[0][0], 0))):
        other = found.get((reference, label))
        versus = separation(other, s) if other is not None and system != reference else None
        result.append(SpreadRow(label, system, s, versus, reference))
    return result
