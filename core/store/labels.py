"""Human labels in the results store (schema version 6, table ``labels``; version 7 adds ``output_digest`` and
``probability``): mixed into
:class:`~ragassay.store.ResultsStore` (the :class:`~ragassay.store.protocols.LabelStore` protocol).

Rows are only ever added; an undo marks the annotator's latest label undone (``undone_at``). What counts is the
latest label that is not undone per (rubric, annotator, item): :meth:`LabelTables.labels`. Every label is checked
against its run before it is written: the run exists, the sample is one of its samples and every system named
has an answer (an ``ok`` output) for it, so no label reaches a run it was not given on.

Adding labels is staged, then switched in: the checks and the look-up of labels stored already are reads, a
chunk of :data:`KEYS_PER_QUERY` labels at a time, which block no other writer; the new rows are then inserted
in one short transaction that first looks again for labels stored since the reads began. So an import of
20,000 labels is still all or nothing, and a label given in ``ragassay label`` meanwhile waits milliseconds,
not the whole import.

Every label is stored with the digest of the answer(s) it judged (:mod:`ragassay.labels.digest`): a label that
comes without one gets the digest of its run's stored answers; one that comes with a digest other than that of
the stored answers is refused (it was given on other answers than the run holds).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import func, insert, select, update

from ..errors import StoreError
from . import schema as t
from .healing import healing

KEYS_PER_QUERY = 400  # labels checked per read (each IN list far below every driver's parameter limit)
_COLUMNS = (
    "run_id",
    "sample_id",
    "system",
    "systems_json",
    "item_key",
    "rubric",
    "rubric_version",
    "annotator",
    "value",
    "labelled_at",
)  # what makes two labels the same label


class LabelTables:
    """Adding, reading and undoing labels (needs ``self.engine`` and ``self.healer``)."""

    engine: Any
    healer: Any

    def add_label(self, label: Any) -> None:
        """Store one :class:`~ragassay.labels.Label` after checking it against its run (:class:`StoreError`
        naming the run, sample or system when it does not fit)."""
        self.add_labels([label], [f"label of sample '{label.sample_id}'"])

    def add_labels(self, labels: Sequence[Any], sources: Sequence[str] | None = None) -> int:
        """Store labels all or none, skipping any already stored as it is (same run, item, order, rubric and
        version, annotator, value and time): importing a file twice adds it once. Returns how many were added.
        ``sources`` names each label in errors (e.g. ``FILE:LINE``).

        Staged, then switched in (see the module docstring); each half is retried on its own when the database
        fails transiently."""
        rows, mark = self.healer(lambda: _stage(self.engine, labels, sources))
        if not rows:
            return 0
        return self.healer(lambda: _switch(self.engine, rows, mark))

    @healing
    def labels(self, run_id: str, rubric: str | None = None, *, annotator: str | None = None) -> list[Any]:
        """The labels that count on ``run_id`` (of ``rubric`` / ``annotator`` when given): the latest label that
        is not undone per (rubric, annotator, item), in the order they were given."""
        c = t.labels.c
        query = select(t.labels).where(c.run_id == run_id, c.undone_at.is_(None)).order_by(c.labelled_at, c.id)
        if rubric is not None:
            query = query.where(c.rubric == rubric)
        if annotator is not None:
            query = query.where(c.annotator == annotator)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        latest = {(r.rubric, r.annotator, r.item_key): r for r in rows}  # rows are in time order: the last wins
        return [_label(r) for r in sorted(latest.values(), key=lambda r: (r.labelled_at, r.id))]

    @healing
    def labels_of_samples(self, sample_ids: Sequence[str], rubric: str | None = None) -> list[Any]:
        """The labels that count on any run for the samples ``sample_ids`` (of ``rubric`` when given), each run's
        latest per (rubric, annotator, item), in the order they were given: the labels another run may reuse
        (:func:`ragassay.labels.reuse.reusable_labels`)."""
        c = t.labels.c
        ids = sorted(set(sample_ids))
        rows = []
        with self.engine.connect() as conn:
            for start in range(0, len(ids), KEYS_PER_QUERY):
                query = select(t.labels).where(
                    c.undone_at.is_(None), c.sample_id.in_(ids[start : start + KEYS_PER_QUERY])
                )
                if rubric is not None:
                    query = query.where(c.rubric == rubric)
                rows.extend(conn.execute(query).all())
        rows.sort(key=lambda r: (r.labelled_at, r.id))
        latest = {(r.run_id, r.rubric, r.annotator, r.item_key): r for r in rows}
        return [_label(r) for r in sorted(latest.values(), key=lambda r: (r.labelled_at, r.id))]

    @healing
    def undo_label(self, run_id: str, rubric: str, annotator: str) -> Any | None:
        """Mark ``annotator``'s latest label of ``rubric`` on ``run_id`` undone and return it (None when there is
        none to undo)."""
        c = t.labels.c
        with self.engine.begin() as conn:
            row = conn.execute(
                select(t.labels)
                .where(c.run_id == run_id, c.rubric == rubric, c.annotator == annotator, c.undone_at.is_(None))
                .order_by(c.labelled_at.desc(), c.id.desc())
                .limit(1)
            ).first()
            if row is None:
                return None
            conn.execute(update(t.labels).where(c.id == row.id).values(undone_at=time.time()))
        return _label(row)


def _stage(engine: Any, labels: Sequence[Any], sources: Sequence[str] | None) -> tuple[list[dict[str, Any]], int]:
    """The rows of the labels not stored yet (each once), checked against their runs, read a chunk at a time
    (no write lock); and the largest label id when the reads began (what :func:`_switch` looks past)."""
    rows: list[dict[str, Any]] = []
    seen: set[tuple] = set()
    with engine.connect() as conn:
        mark = conn.execute(select(func.max(t.labels.c.id))).scalar() or 0
        for start in range(0, len(labels), KEYS_PER_QUERY):
            chunk = labels[start : start + KEYS_PER_QUERY]
            known = _Known(conn, chunk)
            for i, label in enumerate(chunk, start=start):
                where = sources[i] if sources else f"label {i + 1}"
                known.check(label, where)
                row = _row(label)
                row["output_digest"] = known.digest(label, where)
                key = _key(row)
                if key not in seen and key not in known.stored:
                    seen.add(key)
                    rows.append(row)
    return rows, mark


def _switch(engine: Any, rows: list[dict[str, Any]], mark: int) -> int:
    """Insert the staged ``rows`` in one short transaction, leaving out those another writer stored since the
    stage began (labels with an id above ``mark``); returns how many were inserted."""
    with engine.begin() as conn:
        since = {tuple(r) for r in conn.execute(select(*(t.labels.c[n] for n in _COLUMNS)).where(t.labels.c.id > mark))}
        new = [row for row in rows if _key(row) not in since]
        if new:
            conn.execute(insert(t.labels), new)
    return len(new)


class _Known:
    """What the store holds for a chunk of labels, read in a few statements: the runs, their samples, the
    systems that answered them, and the labels of these items stored already."""

    def __init__(self, conn: Any, labels: Iterable[Any]):
        labels = list(labels)
        runs = sorted({label.run_id for label in labels})
        self.runs = {r for (r,) in conn.execute(select(t.runs.c.id).where(t.runs.c.id.in_(runs)))}
        self.samples: set[tuple[str, str]] = set()
        self.answered: dict[tuple[str, str, str], str | None] = {}
        self.stored: set[tuple] = set()
        s, o, c = t.run_samples.c, t.outputs.c, t.labels.c
        for run in self.runs:
            mine = [label for label in labels if label.run_id == run]
            ids = sorted({label.sample_id for label in mine})
            found = conn.execute(select(s.question_id).where(s.run_id == run, s.question_id.in_(ids)))
            self.samples |= {(run, qid) for (qid,) in found}
            ok = select(o.question_id, o.system, o.answer).where(
                o.run_id == run, o.question_id.in_(ids), o.status == "ok"
            )
            self.answered.update({(run, qid, system): answer for qid, system, answer in conn.execute(ok)})
            items = sorted({label.item_key for label in mine})
            same = select(*(c[n] for n in _COLUMNS)).where(c.run_id == run, c.item_key.in_(items))
            self.stored |= {tuple(r) for r in conn.execute(same)}

    def check(self, label: Any, where: str) -> None:
        """Raise :class:`StoreError` unless ``label``'s run exists, has its sample, and every system it names has
        an ok output for that sample."""
        run = label.run_id
        if run not in self.runs:
            raise StoreError(
                f"{where}: no run '{run}' in this results store; labels are stored on the run they were "
                "given on (list the runs with: ragassay runs)"
            )
        if (run, label.sample_id) not in self.samples:
            raise StoreError(f"{where}: run {run[:12]} has no sample '{label.sample_id}'")
        systems = [label.system] if label.system is not None else list(label.systems)
        missing = [s for s in systems if (run, label.sample_id, s) not in self.answered]
        if missing:
            raise StoreError(
                f"{where}: run {run[:12]} has no answer of system {', '.join(repr(s) for s in missing)} to sample "
                f"'{label.sample_id}' (only answered outputs can be labelled)"
            )

    def digest(self, label: Any, where: str) -> str:
        """The digest of the stored answer(s) ``label`` is about (checked: :meth:`check` first); a label that
        names another digest was given on other answers, a :class:`StoreError`."""
        from ..labels.digest import label_digest

        stored = label_digest(label, lambda system, sample: self.answered[(label.run_id, sample, system)])
        if label.output_digest is not None and label.output_digest != stored:
            raise StoreError(
                f"{where}: the label judged other answer text (digest {label.output_digest}) than run "
                f"{label.run_id[:12]} holds for sample '{label.sample_id}' (digest {stored}); it belongs to "
                "another run or a changed answer, so it is not stored on this one"
            )
        return stored


def _row(label: Any) -> dict[str, Any]:
    return {
        "run_id": label.run_id,
        "sample_id": label.sample_id,
        "system": label.system,
        "systems_json": None if label.systems is None else json.dumps(list(label.systems), ensure_ascii=False),
        "item_key": label.item_key,
        "rubric": label.rubric,
        "rubric_version": label.rubric_version,
        "annotator": label.annotator,
        "value": label.value,
        "labelled_at": label.labelled_at,
        "output_digest": label.output_digest,
        "probability": label.probability,
    }


def _key(row: dict[str, Any]) -> tuple:
    return tuple(row[name] for name in _COLUMNS)


def _label(row: Any) -> Any:
    from ..labels.model import Label  # the model alone (the contract), not the rubric files and JSONL helpers

    return Label(
        run_id=row.run_id,
        sample_id=row.sample_id,
        system=row.system,
        systems=None if row.systems_json is None else tuple(json.loads(row.systems_json)),
        rubric=row.rubric,
        rubric_version=row.rubric_version,
        annotator=row.annotator,
        value=row.value,
        labelled_at=row.labelled_at,
        output_digest=row.output_digest,
        probability=row.probability,
    )
