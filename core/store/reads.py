"""What the read model asks of a results store (:func:`ragassay.results.read_run`): one statement per table.

:class:`RunReads` is mixed into :class:`~ragassay.store.ResultsStore`. Every method returns plain tuples in the
column order named by the matching ``*_COLUMNS`` constant, so a backend other than SQLAlchemy (see
:class:`ragassay.store.protocols.ResultsReader`) can answer with the same shapes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import func, select

from ..models import JUDGEMENT_COLUMNS, METRIC_COLUMNS, OUTPUT_COLUMNS
from . import schema as t
from .contexts import fetch_texts
from .healing import Healer, healing, healing_stream
from .lease import Holder, stale_reason

_BATCH = 10_000  # rows fetched at a time by a streamed read
_LEASE = ("key", "run_id", "owner", "host", "pid", "acquired_at", "heartbeat_at")


class RunReads:
    """The read-model queries of a SQLAlchemy results store (``self.engine``)."""

    engine: Any
    healer: Healer

    @healing_stream
    def sample_rows(self, run_id: str) -> Iterator[tuple[str, str]]:
        """(question_id, sample_json) of every sample of the run, in dataset order, streamed in batches."""
        c = t.run_samples.c
        query = select(c.question_id, c.sample_json).where(c.run_id == run_id).order_by(c.position)
        with self.engine.connect() as conn:
            for row in conn.execution_options(yield_per=_BATCH).execute(query):
                yield tuple(row)

    @healing_stream
    def output_records(self, run_id: str, *, payloads: bool = False) -> Iterator[tuple]:
        """One tuple per stored output (:data:`OUTPUT_COLUMNS`, then ``output_json`` when ``payloads``), streamed
        in batches (one statement). The JSON names its contexts by key: resolve them with :meth:`context_texts`
        (:func:`ragassay.store.contexts.unpack`)."""
        o = t.outputs.c
        columns = [o[name] for name in OUTPUT_COLUMNS] + ([o.output_json] if payloads else [])
        with self.engine.connect() as conn:
            for row in conn.execution_options(yield_per=_BATCH).execute(select(*columns).where(o.run_id == run_id)):
                yield tuple(row)

    @healing_stream
    def output_batches(self, run_id: str, *, payloads: bool = False) -> Iterator[list]:
        """:meth:`output_records` in batches of up to 10,000 of the driver's row tuples (one statement)."""
        o = t.outputs.c
        columns = [o[name] for name in OUTPUT_COLUMNS] + ([o.output_json] if payloads else [])
        yield from self._batches(select(*columns).where(o.run_id == run_id))

    @healing_stream
    def score_records(self, run_id: str, kind: str, question_ids: Sequence[str] | None = None) -> Iterator[tuple]:
        """Every metric value (``kind="metric"``: :data:`METRIC_COLUMNS`) or judgement (``"judge"``:
        :data:`JUDGEMENT_COLUMNS`) of the run, all repeats, streamed in batches (one statement); only those of
        the samples ``question_ids`` when given (a sequential run's batch: one statement per 500 samples)."""
        query = _score_query(run_id, kind)
        if question_ids is None:
            queries = [query]
        else:
            ids = list(question_ids)
            queries = [query.where(t.outputs.c.question_id.in_(ids[i : i + 500])) for i in range(0, len(ids), 500)]
        with self.engine.connect() as conn:
            for each in queries:
                for row in conn.execution_options(yield_per=_BATCH).execute(each):
                    yield tuple(row)

    @healing_stream
    def score_batches(self, run_id: str, kind: str) -> Iterator[list]:
        """:meth:`score_records` of the whole run in batches of up to 10,000 rows (one statement), each a list
        of the driver's row tuples in the same column order (the columns are text, integers and floats, which
        need no conversion): what a columnar reader (:func:`ragassay.results.read_run`) takes without one Python
        call per row."""
        yield from self._batches(_score_query(run_id, kind))

    def _batches(self, query: Any) -> Iterator[list]:
        """The rows of ``query`` in batches of up to 10,000 of the driver's tuples, no Row objects: for queries
        of text, integer and float columns only, which need no conversion."""
        with self.engine.connect() as conn:
            if self.engine.dialect.name != "sqlite":  # a server-side cursor keeps memory flat on PostgreSQL
                for part in conn.execution_options(yield_per=_BATCH).execute(query).partitions():
                    yield [tuple(row) for row in part]
                return
            result = conn.execute(query)  # SQLite's cursor steps through the rows: memory stays flat
            try:
                while batch := result.context.cursor.fetchmany(_BATCH):
                    yield batch
            finally:
                result.close()

    @healing
    def run_and_holder(self, ref: str) -> tuple[dict[str, Any], Holder | None]:
        """The run ``ref`` (an id or unique prefix) and the live lease on it (None when no process works on it),
        in one statement; an unknown or ambiguous ``ref`` raises :meth:`get_run`'s error."""
        lease = t.run_leases
        query = (
            select(t.runs, *(lease.c[name].label(f"lease_{name}") for name in _LEASE))
            .outerjoin(lease, lease.c.run_id == t.runs.c.id)
            .where(t.runs.c.id.startswith(ref, autoescape=True))
        )
        with self.engine.connect() as conn:
            rows = [dict(row._mapping) for row in conn.execute(query)]
        if len({row["id"] for row in rows}) != 1:
            self.get_run(ref)  # raises: not found, or ambiguous (naming the known runs)
        row = rows[0]
        lease_values = {name: row.pop(f"lease_{name}") for name in _LEASE}
        holder = None if lease_values["owner"] is None else Holder(**lease_values)
        return row, holder if holder is not None and stale_reason(holder) is None else None

    @healing
    def run_version(self, ref: str) -> tuple[str, tuple]:
        """The run ``ref`` (an id or unique prefix) and its version, in one statement: a tuple that changes
        whenever anything of the run is written (a batch of outputs, metric values or judgements, a status, a
        resume) and whenever its lease is taken, released or goes stale, so a reader may keep what it computed
        from the run for as long as the version stays the same (``ragassay serve`` does).

        The version is the run's creation time, status and ``updated_at`` (set by every write), its numbers of
        outputs, metric values and judgements with the largest output id, and the owner of its live lease (None
        without one). An unknown or ambiguous ``ref`` raises :meth:`get_run`'s error.
        """
        r, o, lease = t.runs.c, t.outputs.c, t.run_leases.c

        def count(table: Any) -> Any:
            joined = table.join(t.outputs, o.id == table.c.output_id)
            return select(func.count()).select_from(joined).where(o.run_id == r.id).scalar_subquery()

        query = (
            select(
                r.id,
                r.created_at,
                r.status,
                r.updated_at,
                select(func.count()).where(o.run_id == r.id).scalar_subquery(),
                select(func.max(o.id)).where(o.run_id == r.id).scalar_subquery(),
                count(t.metric_values),
                count(t.judgements),
                *(lease[name] for name in _LEASE),
            )
            .outerjoin(t.run_leases, lease.run_id == r.id)
            .where(r.id.startswith(ref, autoescape=True))
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        if len({row[0] for row in rows}) != 1:
            self.get_run(ref)  # raises: not found, or ambiguous (naming the known runs)
        row = rows[0]
        lease_values = dict(zip(_LEASE, row[8:]))
        holder = None if lease_values["owner"] is None else Holder(**lease_values)
        owner = holder.owner if holder is not None and stale_reason(holder) is None else None
        return row[0], (*row[1:8], owner)

    @healing
    def sample_records(
        self, run_id: str, question_id: str
    ) -> tuple[str | None, list[dict], list[dict], list[dict], int]:
        """One sample of a run, in one connection: its sample JSON (None when the run has no such sample), its
        outputs with every stored column, its metric values and judgements (all repeats) with every stored column
        after the output's ``system`` and ``question_id``, and the number of outputs of the whole run."""
        o, s = t.outputs.c, t.run_samples.c
        with self.engine.connect() as conn:
            raw = conn.execute(
                select(s.sample_json).where(s.run_id == run_id, s.question_id == question_id)
            ).scalar_one_or_none()
            records = [
                _dicts(conn.execute(query))
                for query in (
                    select(t.outputs).where(o.run_id == run_id, o.question_id == question_id),
                    _sample_scores(t.metric_values, run_id, question_id),
                    _sample_scores(t.judgements, run_id, question_id),
                )
            ]
            total = conn.execute(select(func.count()).where(o.run_id == run_id)).scalar_one()
        return raw, *records, total

    @healing
    def payload_records(self, run_id: str, question_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(system, question_id, output_json) of the stored outputs of the given samples (contexts by key, as in
        :meth:`output_records`)."""
        o = t.outputs.c
        query = select(o.system, o.question_id, o.output_json).where(
            o.run_id == run_id, o.question_id.in_(list(question_ids)), o.output_json.is_not(None)
        )
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]

    @healing
    def context_texts(self, keys: Sequence[str]) -> dict[str, str]:
        """key -> text of the context texts ``keys`` that stored outputs name (``context_keys`` in their JSON,
        see :mod:`ragassay.store.contexts`), read in bulk: one statement per 5,000 distinct keys."""
        if not keys:
            return {}
        with self.engine.connect() as conn:
            return fetch_texts(conn, keys)


def _score_query(run_id: str, kind: str) -> Any:
    """The metric values (``kind="metric"``: :data:`METRIC_COLUMNS`) or judgements (:data:`JUDGEMENT_COLUMNS`)
    of a run's outputs."""
    table, names = (t.metric_values, METRIC_COLUMNS) if kind == "metric" else (t.judgements, JUDGEMENT_COLUMNS)
    columns = [t.outputs.c.system, t.outputs.c.question_id] + [table.c[name] for name in names[2:]]
    return select(*columns).join(t.outputs, t.outputs.c.id == table.c.output_id).where(t.outputs.c.run_id == run_id)


def _sample_scores(table: Any, run_id: str, question_id: str) -> Any:
    """Every column of the metric values or judgements (``table``) of one sample's outputs, after the output's
    system and question id."""
    o = t.outputs.c
    joined = select(o.system, o.question_id, table).join(t.outputs, o.id == table.c.output_id)
    return joined.where(o.run_id == run_id, o.question_id == question_id)


def _dicts(result: Any) -> list[dict[str, Any]]:
    """The rows of a query result as dicts (the keys read once, not per row)."""
    keys = list(result.keys())
    return [dict(zip(keys, row)) for row in result]
