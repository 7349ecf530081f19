"""Every stored metric value and judgement of a run, column by column (:class:`ScoreTable`).

A run of 100,000 samples with seven metrics holds 700,000 scores: kept as numpy arrays (system, sample, column,
repeat, value) they take about 13 MB, where one object per score would take hundreds. What most scores do not
have (an unscored reason, a verdict, an explanation, details, model calls of their own) is kept only for the
scores that have it. :meth:`ScoreTable.record` gives one score as a :class:`ScoreRecord` when a caller wants it
whole.
"""

from __future__ import annotations

import array
import dataclasses
import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress
from itertools import repeat as every
from operator import gt, is_not
from typing import Any

import numpy as np

from .usage import NOTHING_UNPRICED, ZERO, Usage

METRIC, JUDGE = "metric", "judge"


@dataclasses.dataclass(frozen=True, slots=True)
class ScoreRecord:
    """One stored metric value or judgement (``kind``), any repeat. ``value`` is the metric's value or the
    judge's score (None exactly when unscored); ``verdict`` and ``explanation`` are the judge's."""

    system: str
    question_id: str
    kind: str  # metric | judge
    label: str
    repeat: int
    value: float | None
    unscored_reason: str | None
    verdict: str | None
    explanation: str | None
    judge_id: str | None
    details_json: str | None
    usage: Usage

    @property
    def column(self) -> str:
        """The comparison column: the metric label, or ``judge:<label>``."""
        return self.label if self.kind == METRIC else f"judge:{self.label}"

    @property
    def details(self) -> dict[str, Any]:
        return json.loads(self.details_json) if self.details_json else {}


@dataclasses.dataclass(eq=False)
class ScoreTable:
    """The scores of a run as parallel arrays (row i: system, sample, column, repeat, value) and sparse extras."""

    systems: list[str]
    question_ids: list[str]
    columns: list[tuple[str, str]]  # (kind, label) per column index
    system: np.ndarray
    sample: np.ndarray  # -1: a question id the run's samples do not have (kept in ``foreign``)
    column: np.ndarray
    repeat: np.ndarray
    value: np.ndarray  # NaN exactly when unscored
    #: row -> (unscored reason, verdict, explanation, judge id, details JSON), for rows that have any
    texts: dict[int, tuple] = dataclasses.field(default_factory=dict)
    usages: dict[int, Usage] = dataclasses.field(default_factory=dict)  # rows whose own model calls are not zero
    #: True where nothing was spent and the stored cost is NULL (:data:`~.usage.NOTHING_UNPRICED`), else ZERO
    null_cost: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=bool))
    foreign: dict[int, str] = dataclasses.field(default_factory=dict)  # row -> question id outside the samples

    def __len__(self) -> int:
        return len(self.value)

    def record(self, row: int) -> ScoreRecord:
        """Row ``row`` as one object."""
        kind, label = self.columns[int(self.column[row])]
        index = int(self.sample[row])
        question_id = self.question_ids[index] if index >= 0 else self.foreign[row]
        value = float(self.value[row])
        reason, verdict, explanation, judge_id, details = self.texts.get(row, (None,) * 5)
        return ScoreRecord(
            self.systems[int(self.system[row])],
            question_id,
            kind,
            label,
            int(self.repeat[row]),
            None if value != value else value,
            reason,
            verdict,
            explanation,
            judge_id,
            details,
            self.usages.get(row) or (NOTHING_UNPRICED if self.null_cost[row] else ZERO),
        )

    def rows(self, mask: np.ndarray | None = None) -> Iterator[ScoreRecord]:
        """The records of the rows ``mask`` selects (all rows without one), in stored order."""
        indices = range(len(self)) if mask is None else np.flatnonzero(mask)
        return (self.record(int(i)) for i in indices)

    def kind_mask(self, kind: str) -> np.ndarray:
        """Rows whose column is a metric (``"metric"``) or a judge (``"judge"``)."""
        wanted = np.array([k == kind for k, _ in self.columns] or [False], dtype=bool)
        return wanted[self.column] if len(self) else np.zeros(0, dtype=bool)


class TableBuilder:
    """Collects stored score rows, a batch at a time, into a :class:`ScoreTable` (compact arrays while reading)."""

    def __init__(self, systems: list[str], question_ids: list[str], position: dict[str, int]):
        self.systems, self.question_ids, self.position = list(systems), question_ids, position
        self.system_index = {name: i for i, name in enumerate(self.systems)}
        self.columns: list[tuple[str, str]] = []
        self.column_index: dict[tuple[str, str], int] = {}
        self.arrays = {name: array.array(code) for name, code in (("system", "h"), ("sample", "i"), ("column", "h"))}
        self.repeats, self.values, self.null_cost = array.array("h"), array.array("d"), array.array("b")
        self.texts: dict[int, tuple] = {}
        self.usages: dict[int, Usage] = {}
        self.foreign: dict[int, str] = {}

    def add_batch(self, kind: str, columns: Sequence[Sequence], texts: Sequence[Sequence | None], usage: Sequence):
        """Stored scores of one ``kind``, column by column: ``columns`` is (system, question_id, label, repeat,
        value) with one entry per score, ``texts`` the five text columns (unscored reason, verdict, explanation,
        judge id, details JSON; None for a column that is None on every score) and ``usage`` the seven usage
        columns (:data:`ragassay.store.reads.USAGE_COLUMNS`). The same table as one score at a time, in order."""
        system, question_id, label, repeat, value = columns
        start, n = len(self.values), len(value)
        for name in dict.fromkeys(system):
            if name not in self.system_index:
                self.system_index[name] = len(self.systems)
                self.systems.append(name)
        for name in dict.fromkeys(label):
            if (kind, name) not in self.column_index:
                self.column_index[(kind, name)] = len(self.columns)
                self.columns.append((kind, name))
        codes = {name: self.column_index[(kind, name)] for name in dict.fromkeys(label)}
        samples = [self.position.get(q, -1) for q in question_id]
        self.foreign.update((start + i, question_id[i]) for i in compress(range(n), map(gt, every(0), samples)))
        self.arrays["system"].extend([self.system_index[name] for name in system])
        self.arrays["sample"].extend(samples)
        self.arrays["column"].extend([codes[name] for name in label])
        self.repeats.extend(repeat)
        self.values.frombytes(np.array(value, dtype=np.float64).tobytes())  # None -> NaN
        present = [column for column in texts if column is not None]
        for i in sorted({i for column in present for i in compress(range(n), map(is_not, column, every(None)))}):
            self.texts[start + i] = tuple(None if column is None else column[i] for column in texts)
        null_cost = [cost is None for cost in usage[5]]
        for i in sorted({i for column in usage for i in compress(range(n), column)}):  # spent something
            spent = Usage.of(tuple(column[i] for column in usage))
            null_cost[i] = spent is NOTHING_UNPRICED
            if spent is not ZERO and spent is not NOTHING_UNPRICED:
                self.usages[start + i] = spent
        self.null_cost.extend(null_cost)

    def table(self) -> ScoreTable:
        def numpy(values: array.array) -> np.ndarray:
            return np.frombuffer(values, dtype=values.typecode).copy() if len(values) else np.zeros(0, values.typecode)

        return ScoreTable(
            self.systems,
            self.question_ids,
            self.columns,
            numpy(self.arrays["system"]),
            numpy(self.arrays["sample"]),
            numpy(self.arrays["column"]),
            numpy(self.repeats),
            numpy(self.values),
            texts=self.texts,
            usages=self.usages,
            null_cost=numpy(self.null_cost).astype(bool),
            foreign=self.foreign,
        )


def labels_of(columns: Iterable[tuple[str, str]], kind: str) -> set[str]:
    """The labels of ``columns`` of one kind."""
    return {label for k, label in columns if k == kind}
