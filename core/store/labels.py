"""Human labels in the results store (schema version 6, table ``labels``): mixed into
:class:`~ragassay.store.ResultsStore` (the :class:`~ragassay.store.protocols.LabelStore` protocol).

Rows are only ever added; an undo marks the annotator's latest label undone (``undone_at``). What counts is the
latest label that is not undone per (rubric, annotator, item): :meth:`LabelTables.labels`. Every label is checked
against its run before it is written: the run exists, the sample is one of its samples and every system named
has an answer (an ``ok`` output) for it, so no label reaches a run it was not given on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, insert, select, update

from ..errors import StoreError
from . import schema as t
from .healing import healing


class LabelTables:
    """Adding, reading and undoing labels (needs ``self.engine`` and ``self.healer``)."""

    engine: Any

    @healing
    def add_label(self, label: Any) -> None:
        """Store one :class:`~ragassay.labels.Label` after checking it against its run (:class:`StoreError`
        naming the run, sample or system when it does not fit)."""
        with self.engine.begin() as conn:
            _check(conn, label, f"label of sample '{label.sample_id}'")
            conn.execute(insert(t.labels).values(**_row(label)))

    @healing
    def add_labels(self, labels: Sequence[Any], sources: Sequence[str] | None = None) -> int:
        """Store labels in one transaction (all or none), skipping any already stored as it is (same run, item,
        order, rubric and version, annotator, value and time): importing a file twice adds it once. Returns how
        many were added. ``sources`` names each label in errors (e.g. ``FILE:LINE``)."""
        added = 0
        with self.engine.begin() as conn:
            for i, label in enumerate(labels):
                where = sources[i] if sources else f"label {i + 1}"
                _check(conn, label, where)
                row = _row(label)
                same = [t.labels.c[key] == value for key, value in row.items() if value is not None]
                if conn.execute(select(t.labels.c.id).where(and_(*same)).limit(1)).first() is None:
                    conn.execute(insert(t.labels).values(**row))
                    added += 1
        return added

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
    }


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
    )


def _check(conn: Any, label: Any, where: str) -> None:
    """Raise :class:`StoreError` unless ``label``'s run exists, has its sample, and every system it names has an
    ok output for that sample."""
    run = label.run_id
    if conn.execute(select(t.runs.c.id).where(t.runs.c.id == run)).first() is None:
        raise StoreError(
            f"{where}: no run '{run}' in this results store; labels are stored on the run they were "
            "given on (list the runs with: ragassay runs)"
        )
    sample = select(t.run_samples.c.question_id).where(
        t.run_samples.c.run_id == run, t.run_samples.c.question_id == label.sample_id
    )
    if conn.execute(sample).first() is None:
        raise StoreError(f"{where}: run {run[:12]} has no sample '{label.sample_id}'")
    systems = [label.system] if label.system is not None else list(label.systems)
    o = t.outputs.c
    answered = {
        s
        for (s,) in conn.execute(
            select(o.system).where(
                o.run_id == run, o.question_id == label.sample_id, o.system.in_(systems), o.status == "ok"
            )
        )
    }
    missing = [s for s in systems if s not in answered]
    if missing:
        raise StoreError(
            f"{where}: run {run[:12]} has no answer of system {', '.join(repr(s) for s in missing)} to sample "
            f"'{label.sample_id}' (only answered outputs can be labelled)"
        )
