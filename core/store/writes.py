"""Writing a batch of unit results: one transaction, idempotent when written again.

A batch is written in one transaction: all of it is stored, or none of it. The output ids the database hands
out inside that transaction are kept only inside it (never written onto the results), so a batch written again
after a failure gets its ids from the database again: SQLite reuses the ids a rollback took back, possibly for
another writer's outputs, and a value must never be attached to those.

With ``replace_existing`` a fresh result first deletes any output (with its metric values and judgements)
stored for the same (run, system, question_id), so a unit computed twice (a crashed worker's unit redone
elsewhere, two drivers racing) is stored once. The UNIQUE constraint ``uq_output_unit`` on
``outputs(run_id, system, question_id)`` makes a concurrent writer of the same unit fail at commit time
(IntegrityError, or a deadlock / serialization failure on PostgreSQL); the batch is then written again from the
start (the newest write wins).

Context texts go to ``context_texts`` first, in the same transaction, ``INSERT ... ON CONFLICT DO NOTHING`` in
key order (:mod:`ragassay.store.contexts`): concurrent writers and a batch written again store each text once.

Transient failures (a lost connection, a locked file, a conflict) are retried by the store's
:class:`~ragassay.store.healing.Healer` until its deadline. A retry always replaces: if a lost connection hid
a commit that in fact succeeded, the batch written again replaces its own rows instead of failing on them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, select, tuple_, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from . import schema as t
from .contexts import store_texts
from .healing import Healer
from .rows import by_columns, output_row, value_pairs, value_rows

_KEYS_PER_STATEMENT = 400  # (system, question_id) pairs per IN list: far below every driver's parameter limit


def write_batch(
    engine: Engine,
    run_id: str,
    results: Sequence[Any],
    context: Any,
    *,
    replace_existing: bool = False,
    healer: Healer | None = None,
) -> None:
    """Write ``results`` (:class:`~ragassay.store.units.UnitResult`) in one transaction; with
    ``replace_existing``, delete the stored outputs of the same units first and retry on a concurrent conflict.

    :param healer: retries transient failures and explains permanent ones (default: no retries).
    """
    healer = healer or Healer(engine.url.render_as_string(hide_password=True), retry_s=0)
    attempts = 0

    def attempt() -> None:
        nonlocal attempts
        replace = replace_existing or attempts > 0
        attempts += 1
        with engine.begin() as conn:
            _write(conn, run_id, results, context, time.time(), replace=replace)

    healer(attempt, also_transient=_is_conflict if replace_existing else None)


def write_in(conn: Any, run_id: str, results: Sequence[Any], context: Any, now: float) -> None:
    """Write ``results`` inside the caller's transaction (a watch commits them with its own rows:
    :mod:`ragassay.store.watch`); fresh units only, as a first write of :func:`write_batch`."""
    _write(conn, run_id, results, context, now, replace=False)


def _is_conflict(exc: BaseException) -> bool:
    """Whether a failed write lost a race with another writer of the same unit (worth retrying) rather than
    being wrong (a batch with a duplicate value fails at once)."""
    if not isinstance(exc, IntegrityError):
        return False
    orig = getattr(exc, "orig", None)
    constraint = getattr(getattr(orig, "diag", None), "constraint_name", None)
    return constraint == "uq_output_unit" or "outputs.run_id, outputs.system, outputs.question_id" in str(orig)


def _write(conn: Any, run_id: str, results: Sequence[Any], context: Any, now: float, *, replace: bool) -> None:
    replaced = [r.replaces for r in results if r.replaces is not None]
    if replaced:
        _delete_outputs(conn, t.outputs.c.id.in_(replaced))
    fresh = [r for r in results if r.output_id is None]
    if replace:
        units = sorted({(r.system, r.question_id) for r in fresh})
        for start in range(0, len(units), _KEYS_PER_STATEMENT):
            chunk = units[start : start + _KEYS_PER_STATEMENT]
            same_unit = tuple_(t.outputs.c.system, t.outputs.c.question_id).in_(chunk)
            _delete_outputs(conn, (t.outputs.c.run_id == run_id) & same_unit)
        fresh.sort(key=lambda r: (r.system, r.question_id))  # one insert order for every writer: fewer deadlocks
        for result in results:  # values added to a stored output: a redone unit replaces its earlier values
            if result.output_id is not None:
                _delete_values(conn, result)
    ids = _insert_outputs(conn, run_id, fresh, context, now)
    owner = [r.output_id if r.output_id is not None else ids[id(r)] for r in results]
    values = [value_rows(o, r, context) for o, r in zip(owner, results)]
    for rows in by_columns([row for metrics, _ in values for row in metrics]):
        conn.execute(insert(t.metric_values), rows)
    for rows in by_columns([row for _, judgements in values for row in judgements]):
        conn.execute(insert(t.judgements), rows)
    conn.execute(update(t.runs).where(t.runs.c.id == run_id).values(updated_at=now))


def _insert_outputs(conn: Any, run_id: str, fresh: list[Any], context: Any, now: float) -> dict[int, int]:
    """Insert the outputs of ``fresh`` results; returns ``id(result)`` -> the output id the database gave it.

    The ids live only as long as this transaction: they are never written onto the results, so a batch written
    again after a rollback (a retry, a resume) gets new ids from the database instead of ids the rollback took
    back (SQLite hands those out again, possibly to another writer's outputs).
    """
    if not fresh:
        return {}
    texts: dict[str, str] = {}  # the outputs' context texts, stored once per store (ragassay.store.contexts)
    rows = [output_row(run_id, r, now, context.prices, texts) for r in fresh]
    store_texts(conn, texts)
    ids = (
        conn.execute(
            insert(t.outputs).returning(t.outputs.c.id, sort_by_parameter_order=True),
            rows,
        )
        .scalars()
        .all()
    )
    return {id(result): output_id for result, output_id in zip(fresh, ids, strict=True)}


def _delete_values(conn: Any, result: Any) -> None:
    """Delete the stored metric values and judgements that ``result`` (on a stored output) writes again."""
    m, j = t.metric_values.c, t.judgements.c
    metrics, judges = value_pairs(result)
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
