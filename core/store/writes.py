"""Writing a batch of unit results: one transaction, optionally replacing what is stored for the same units.

With ``replace_existing`` a fresh result first deletes any output (with its metric values and judgements)
stored for the same (run, system, question_id), so a unit computed twice (a crashed worker's unit redone
elsewhere, two drivers racing) is stored once. The UNIQUE constraint ``uq_output_unit`` on
``outputs(run_id, system, question_id)`` makes a concurrent writer of the same unit fail at commit time
(IntegrityError, or a deadlock / serialization failure on PostgreSQL); the batch is then retried from the start
(the newest write wins), at most :data:`ATTEMPTS` times.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import delete, insert, select, tuple_, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError

from . import schema as t
from .rows import by_columns, judgement_row, metric_row, output_row

ATTEMPTS = 8
_RETRY_SQLSTATES = {"40001", "40P01"}  # serialization failure, deadlock detected (PostgreSQL)
_KEYS_PER_STATEMENT = 400  # (system, question_id) pairs per IN list: far below every driver's parameter limit


def write_batch(
    engine: Engine, run_id: str, results: Sequence[Any], context: Any, *, replace_existing: bool = False
) -> None:
    """Write ``results`` (:class:`~ragassay.store.database.UnitResult`) in one transaction; with
    ``replace_existing``, delete the stored outputs of the same units first and retry on a concurrent conflict."""
    if not replace_existing:
        with engine.begin() as conn:
            _write(conn, run_id, results, context, time.time(), replace=False)
        return
    fresh = [r for r in results if r.output_id is None]
    _retrying(lambda: _attempt(engine, run_id, results, fresh, context))


def _attempt(engine: Engine, run_id: str, results: Sequence[Any], fresh: list[Any], context: Any) -> None:
    for result in fresh:  # a failed attempt assigned ids that its rollback took back
        result.output_id = None
    with engine.begin() as conn:
        _write(conn, run_id, results, context, time.time(), replace=True)


def _retrying(write: Callable[[], None]) -> None:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            write()
            return
        except (IntegrityError, OperationalError) as exc:
            if attempt == ATTEMPTS or not _is_conflict(exc):
                raise
            time.sleep(random.uniform(0.005, 0.02) * attempt)  # timing only: the stored rows do not depend on it


def _is_conflict(exc: Exception) -> bool:
    """Whether a failed write lost a race with another writer of the same unit (worth retrying) rather than
    being wrong (a batch with a duplicate value fails at once)."""
    orig = getattr(exc, "orig", None)
    if isinstance(exc, IntegrityError):
        constraint = getattr(getattr(orig, "diag", None), "constraint_name", None)
        return constraint == "uq_output_unit" or "outputs.run_id, outputs.system, outputs.question_id" in str(orig)
    return getattr(orig, "sqlstate", None) in _RETRY_SQLSTATES or "database is locked" in str(orig)


def _write(conn: Any, run_id: str, results: Sequence[Any], context: Any, now: float, *, replace: bool) -> None:
    replaced = [r.replaces for r in results if r.replaces is not None]
    if replaced:
        _delete_outputs(conn, t.outputs.c.id.in_(replaced))
    fresh = [r for r in results if r.output_id is None]
    if replace:
        units = sorted({(r.system, r.question_id) for r in fresh if r.replaces is None})
        for start in range(0, len(units), _KEYS_PER_STATEMENT):
            chunk = units[start : start + _KEYS_PER_STATEMENT]
            same_unit = tuple_(t.outputs.c.system, t.outputs.c.question_id).in_(chunk)
            _delete_outputs(conn, (t.outputs.c.run_id == run_id) & same_unit)
        fresh.sort(key=lambda r: (r.system, r.question_id))  # one insert order for every writer: fewer deadlocks
        for result in results:  # values added to a stored output: a redone unit replaces its earlier values
            if result.output_id is not None:
                _delete_values(conn, result)
    if fresh:
        ids = (
            conn.execute(
                insert(t.outputs).returning(t.outputs.c.id, sort_by_parameter_order=True),
                [output_row(run_id, r, now, context.prices) for r in fresh],
            )
            .scalars()
            .all()
        )
        for result, output_id in zip(fresh, ids):
            result.output_id = output_id
    for rows in by_columns([metric_row(r.output_id, m, context) for r in results for m in r.metrics]):
        conn.execute(insert(t.metric_values), rows)
    for rows in by_columns([judgement_row(r.output_id, j, context) for r in results for j in r.judgements]):
        conn.execute(insert(t.judgements), rows)
    conn.execute(update(t.runs).where(t.runs.c.id == run_id).values(updated_at=now))


def _delete_values(conn: Any, result: Any) -> None:
    """Delete the stored metric values and judgements that ``result`` (on a stored output) writes again."""
    m, j = t.metric_values.c, t.judgements.c
    metrics = sorted({(v.metric, v.repeat) for v in result.metrics})
    judges = sorted({(v.judge, v.repeat) for v in result.judgements})
    if metrics:
        conn.execute(
            delete(t.metric_values).where(m.output_id == result.output_id, tuple_(m.metric, m.repeat).in_(metrics))
        )
    if judges:
        conn.execute(delete(t.judgements).where(j.output_id == result.output_id, tuple_(j.judge, j.repeat).in_(judges)))


def _delete_outputs(conn: Any, which: Any) -> None:
    """Delete the outputs matching ``which`` with their metric values and judgements."""
    ids = select(t.outputs.c.id).where(which)
    conn.execute(delete(t.metric_values).where(t.metric_values.c.output_id.in_(ids)))
    conn.execute(delete(t.judgements).where(t.judgements.c.output_id.in_(ids)))
    conn.execute(delete(t.outputs).where(which))
