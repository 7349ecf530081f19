"""Labels reused across runs: a label counts on a run wherever that run answers the labelled sample with the same
text the label judged (the digest of the answer, or of a pair's two answers: :mod:`ragassay.labels.digest`).

:func:`reusable_labels` is the one place that decides it. Given a target run and labels from anywhere (every run
of the results store, :meth:`ragassay.store.ResultsStore.labels_of_samples`, or a JSONL file), each label is

- **used** when the target run has an answer of every system it names for its sample and the digest of those
  answers equals the label's ``output_digest`` (a label of the target run itself without a digest is used too: a
  run's stored answers never change);
- **stale** when the target run answers that sample, but with other text: the label judged an answer that is gone,
  so it is never used, only counted and reported;
- **unmatched** when the target run has no such answer (another sample, another system, a failed output);
- **undigested** when it comes from another run and carries no digest (a label file written by hand): what it
  judged cannot be checked, so it is not used.

Of the used labels, each annotator's latest per (rubric, item) counts, wherever it was given; the labels are
returned re-addressed to the target run (``run_id``), with their digest and, for labels an active queue drew, the
probability it drew them with (that of the queue on the run they were given on).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import Any

from .digest import item_systems, label_digest
from .model import Label


@dataclasses.dataclass(frozen=True)
class LabelReuse:
    """The labels that count on a target run (:func:`reusable_labels`) and those left out, by reason."""

    run_id: str
    labels: list[Label]  # used: re-addressed to the target run, the latest per (rubric, annotator, item)
    reused_from: dict[str, int]  # run id -> how many of the used labels were given on it (the target run included)
    stale: list[Label]  # their answer changed: never used
    unmatched: int  # about an item the target run does not have
    undigested: int  # from another run, without a digest: cannot be checked, not used

    @property
    def reused(self) -> int:
        """How many of the used labels were given on another run."""
        return sum(n for run, n in self.reused_from.items() if run != self.run_id)

    def describe(self) -> str:
        """One line for a report: how many labels count, how many came from other runs, how many were stale."""
        others = len([run for run in self.reused_from if run != self.run_id])
        parts = [f"{len(self.labels)} label(s) used"]
        if self.reused:
            parts.append(f"{self.reused} reused from {others} other run(s) with the same answers")
        if self.stale:
            parts.append(f"{len(self.stale)} stale (the answer changed since it was labelled; not used)")
        if self.undigested:
            parts.append(f"{self.undigested} from other runs without an output digest (not used)")
        return "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        """Counts as plain values (for ``--format json``)."""
        return {
            "run_id": self.run_id,
            "used": len(self.labels),
            "reused": self.reused,
            "reused_from": dict(self.reused_from),
            "stale": len(self.stale),
            "unmatched": self.unmatched,
            "undigested": self.undigested,
        }


def reusable_labels(run: Any, labels: Iterable[Label], *, rubric: str | None = None) -> LabelReuse:
    """The labels of ``labels`` (of ``rubric`` when given) that count on ``run``, and those that do not, by reason
    (module docstring).

    :param run: the target run as the read model gives it, read with payloads
        (``ragassay.results.read_run(store, ref, payloads=True)``): its id, outputs and answers.
    :param labels: labels from any run: the store's (``labels_of_samples``) or a JSONL file's (``read_jsonl``).
    """
    answers = _Answers(run)
    used: dict[tuple[str, str, str], Label] = {}
    stale: list[Label] = []
    unmatched = undigested = 0
    for label in labels:
        if rubric is not None and label.rubric != rubric:
            continue
        if not answers.has(label):
            unmatched += 1
            continue
        if label.output_digest is None and label.run_id != run.id:
            undigested += 1
            continue
        if label.output_digest is not None and label.output_digest != label_digest(label, answers.answer):
            stale.append(label)
            continue
        key = (label.rubric, label.annotator, label.item_key)
        if key not in used or label.labelled_at >= used[key].labelled_at:
            used[key] = label
    kept = sorted(used.values(), key=lambda x: (x.labelled_at, x.run_id, x.item_key))
    return LabelReuse(
        run_id=run.id,
        labels=[_readdressed(label, run.id, answers) for label in kept],
        reused_from=dict(Counter(label.run_id for label in kept)),
        stale=stale,
        unmatched=unmatched,
        undigested=undigested,
    )


class _Answers:
    """The target run's ok answers, parsed on first use per output."""

    def __init__(self, run: Any):
        self.run = run
        self.samples = set(run.question_ids)
        self.cache: dict[tuple[str, str], str | None] = {}

    def has(self, label: Label) -> bool:
        if label.sample_id not in self.samples:
            return False
        found = (self.run.outputs.get((name, label.sample_id)) for name in item_systems(label.system, label.systems))
        return all(output is not None and output.ok for output in found)

    def answer(self, system: str, sample_id: str) -> str | None:
        key = (system, sample_id)
        if key not in self.cache:
            output = self.run.payload(system, sample_id)
            self.cache[key] = None if output is None else output.answer
        return self.cache[key]


def _readdressed(label: Label, run_id: str, answers: _Answers) -> Label:
    digest = label.output_digest or label_digest(label, answers.answer)
    if label.run_id == run_id and label.output_digest == digest:
        return label
    return label.model_copy(update={"run_id": run_id, "output_digest": digest})
