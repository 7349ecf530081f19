"""People's labels for decisions (``compare``/``gate``/``plan --labelled``, ``assert_no_regression(labelled=)``):
on each run, the labels that count there by :func:`ragassay.labels.reuse.reusable_labels`, so a label whose answer
changed is never used and one given on another run with the same answer is.

:func:`read_people` reads them once per run and rubric, from the results store (every run's labels of the run's
samples, :func:`ragassay.results.read_reusable_labels`) or from a labels file only; :class:`PeopleLabels` keeps the
used labels (re-addressed to the run they count on) and, per run and rubric, how many were used, reused from other
runs, stale or left out, for every output format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..labels.reuse import LabelReuse, reusable_labels
from .read import read_reusable_labels


@dataclasses.dataclass(frozen=True)
class RunLabels:
    """The labels of one rubric on one run: :class:`ragassay.labels.reuse.LabelReuse`."""

    rubric: str
    reuse: LabelReuse

    def line(self) -> str:
        """One line for a report: the run, the rubric and what counted."""
        return f"labels of {self.rubric} on run {self.reuse.run_id[:12]}: {self.reuse.describe()}"

    def as_dict(self) -> dict[str, Any]:
        return {"rubric": self.rubric, **self.reuse.as_dict()}


@dataclasses.dataclass(frozen=True)
class PeopleLabels:
    """The labels the decisions use, per run and rubric, and where they came from."""

    source: str
    runs: list[RunLabels]

    @property
    def labels(self) -> list[Any]:
        """Every used label (:class:`ragassay.labels.Label`), each addressed to the run it counts on."""
        return [label for entry in self.runs for label in entry.reuse.labels]

    def lines(self) -> list[str]:
        """One line per run and rubric (:meth:`RunLabels.line`)."""
        return [entry.line() for entry in self.runs]

    def as_dicts(self) -> list[dict[str, Any]]:
        """Per run and rubric: used, reused, reused_from, stale, unmatched, undigested (``--format json``)."""
        return [entry.as_dict() for entry in self.runs]

    def counts(self, run_id: str, rubric: str) -> dict[str, int]:
        """The counts of one run and rubric as table columns: labels_used, labels_reused, labels_stale,
        labels_undigested (zeros when the run has none)."""
        for entry in self.runs:
            if entry.reuse.run_id == run_id and entry.rubric == rubric:
                found = entry.reuse.as_dict()
                return {f"labels_{k}": found[k] for k in ("used", "reused", "stale", "undigested")}
        return {"labels_used": 0, "labels_reused": 0, "labels_stale": 0, "labels_undigested": 0}


def read_people(
    sides: Sequence[tuple[Any, Any]], rubrics: Sequence[str], file_labels: Sequence[Any] | None, source: str
) -> PeopleLabels:
    """The labels of ``rubrics`` that count on each run of ``sides`` ((store, run) pairs; each run read with
    payloads, :func:`ragassay.results.read_run`): from ``file_labels`` only when given (labels of a file,
    :class:`ragassay.labels.Label`), else from the store's labels of the run's samples on any run. A run named
    twice (the same store and id) is read once."""
    seen, runs = set(), []
    for store, run in sides:
        if (id(store), run.id) in seen:
            continue
        seen.add((id(store), run.id))
        for rubric in dict.fromkeys(rubrics):
            if file_labels is None:
                reuse = read_reusable_labels(store, run, rubric)
            else:
                reuse = reusable_labels(run, file_labels, rubric=rubric)
            runs.append(RunLabels(rubric, reuse))
    return PeopleLabels(source, runs)
