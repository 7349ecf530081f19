"""ResultsStore: write batches of results and read them back (opening and migrating: :mod:`.connect`)."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Engine

from ..errors import StoreError
from ..models import Judgement, MetricValue, RAGOutput, Sample, TokenUsage
from . import schema as t
from .contexts import fetch_texts, keys_of, unpack
from .healing import Healer, healing
from .labels import LabelTables
from .lease import live_holders, run_state
from .reads import RunReads
from .rows import settled
from .traces import TraceTables
from .units import StoredUnit, UnitResult, WriteContext
from .urls import redact_config
from .watch import WatchTables
from .writes import write_batch

SAMPLES_PER_INSERT = 2_000  # rows of run_samples per INSERT while a run is created
KEYS_PER_QUERY = 400  # keys per IN list when reading units back in chunks (under every driver's limit)


class ResultsStore(RunReads, LabelTables, TraceTables, WatchTables):
    """The results database of a project: every protocol of :mod:`ragassay.store.protocols` (the read model's
    queries: :class:`~ragassay.store.reads.RunReads`; human labels: :class:`~ragassay.store.labels.LabelTables`;
    production traces: :class:`~ragassay.store.traces.TraceTables`).

    Every method retries transient database errors and explains permanent ones (see
    :mod:`ragassay.store.healing`; streamed reads retry until their first row): ``healer`` says how long and
    names the database in messages.
    """

    def __init__(self, engine: Engine, healer: Healer | None = None):
        self.engine = engine
        self.healer = healer or Healer(engine.url.render_as_string(hide_password=True))

    # -- runs -----------------------------------------------------------------------------------

    @healing
    def find_run(self, fingerprint: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(t.runs).where(t.runs.c.fingerprint == fingerprint).order_by(t.runs.c.created_at.desc())
            ).first()
        return dict(row._mapping) if row else None

    @healing
    def create_run(
        self, run: dict[str, Any], systems: Sequence[tuple[str, str]], samples: Iterable[Sample | tuple[str, str]]
    ) -> None:
        """Insert a run with its systems (name, spec json) and samples, atomically.

        ``samples``: :class:`Sample` objects or ``(question_id, sample JSON)`` pairs, streamed: they are
        inserted :data:`SAMPLES_PER_INSERT` at a time within the one transaction, never all held at once. They
        must be readable again from the start (a list, or :meth:`ragassay.engine.spool.SampleSpool.pairs`): a retried
        transaction inserts them again.
        """
        if iter(samples) is samples:
            raise TypeError("create_run reads its samples again on a retry: give a list or a re-iterable")
        now = time.time()
        run = {**run, "config_json": redact_config(run["config_json"])}  # never a literal password
        with self._begin() as conn:
            conn.execute(insert(t.runs).values(**run, created_at=now, updated_at=now, status="running"))
            conn.execute(
                insert(t.run_systems),
                [{"run_id": run["id"], "name": n, "position": i, "spec_json": s} for i, (n, s) in enumerate(systems)],
            )
            rows = (
                {"run_id": run["id"], "question_id": qid, "position": i, "sample_json": raw}
                for i, (qid, raw) in enumerate(_sample_pairs(samples))
            )
            while chunk := list(itertools.islice(rows, SAMPLES_PER_INSERT)):
                conn.execute(insert(t.run_samples), chunk)

    @healing
    def set_run_status(self, run_id: str, status: str) -> None:
        with self._begin() as conn:
            conn.execute(update(t.runs).where(t.runs.c.id == run_id).values(status=status, updated_at=time.time()))

    @healing
    def finish_run(self, run_id: str, status: str, warnings: Sequence[str]) -> None:
        """Record the end of a session of a run: its status and every warning it raised."""
        with self._begin() as conn:
            conn.execute(
                update(t.runs)
                .where(t.runs.c.id == run_id)
                .values(status=status, updated_at=time.time(), warnings_json=json.dumps(list(warnings)))
            )

    @healing
    def set_run_spec(self, run_id: str, spec_json: str) -> None:
        """Replace the run's stored resolved spec (a sequential run adds what it decided, ``spec["sequential"]``)."""
        with self._begin() as conn:
            conn.execute(update(t.runs).where(t.runs.c.id == run_id).values(spec_json=spec_json))

    @healing
    def list_runs(self) -> list[dict[str, Any]]:
        """Runs, newest first, with output and failure counts, and ``state`` (running, complete, interrupted)."""
        counts = (
            select(
                t.outputs.c.run_id,
                func.count().label("outputs"),
                func.sum((t.outputs.c.status == "failed").cast(t.Integer)).label("failed"),
            )
            .group_by(t.outputs.c.run_id)
            .subquery()
        )
        systems = (
            select(t.run_systems.c.run_id, func.count().label("systems")).group_by(t.run_systems.c.run_id).subquery()
        )
        query = (
            select(
                t.runs,
                func.coalesce(counts.c.outputs, 0).label("outputs"),
                func.coalesce(counts.c.failed, 0).label("failed"),
                func.coalesce(systems.c.systems, 0).label("systems"),
            )
            .outerjoin(counts, counts.c.run_id == t.runs.c.id)
            .outerjoin(systems, systems.c.run_id == t.runs.c.id)
            .order_by(t.runs.c.created_at.desc())
        )
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(query)]
            holders = live_holders(conn)
        for row in rows:  # state and state_detail come from the run's lease, not from its status column
            row["state"], row["state_detail"] = run_state(row, holders.get(row["id"]))
        return rows

    @healing
    def get_run(self, run_id: str) -> dict[str, Any]:
        """A run by id or unique id prefix; raises :class:`StoreError` naming the known runs."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.runs).where(t.runs.c.id.startswith(run_id, autoescape=True))).all()
        if len(rows) == 1:
            return dict(rows[0]._mapping)
        known = ", ".join(r["id"][:12] for r in self.list_runs()[:10]) or "none"
        problem = "is ambiguous" if rows else "not found"
        raise StoreError(f"run '{run_id}' {problem}. Known runs: {known}. List them with: ragassay runs")

    @healing
    def run_systems(self, run_id: str) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(t.run_systems).where(t.run_systems.c.run_id == run_id).order_by(t.run_systems.c.position)
            )
            return [dict(r._mapping) for r in rows]

    # -- units ----------------------------------------------------------------------------------

    @healing
    def stored_units(self, run_id: str) -> dict[tuple[str, str], StoredUnit]:
        """What is stored per (system, question_id) in a run, all at once (small runs, tests); a run is resumed
        from :meth:`stored_units_of` (a chunk of samples) and :meth:`iter_stored_units` (all, in chunks)."""
        return dict(self.iter_stored_units(run_id))

    def iter_stored_units(self, run_id: str, chunk: int = 2_000) -> Iterator[tuple[tuple[str, str], StoredUnit]]:
        """((system, question_id), what is stored) for every output of a run, read ``chunk`` outputs at a time
        (by id ranges: memory does not grow with the run; each chunk is one read, retried on its own)."""
        o = t.outputs.c
        after = -1
        while True:
            query = select(o.id, o.system, o.question_id, o.status).where(o.run_id == run_id, o.id > after)
            rows, units = self.healer(lambda query=query: self._chunk_of_units(query.order_by(o.id).limit(chunk)))
            if not rows:
                return
            yield from units.items()
            after = rows[-1].id

    def _chunk_of_units(self, query: Any) -> tuple[Sequence[Any], dict[tuple[str, str], StoredUnit]]:
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
            return rows, (self._with_labels(conn, rows) if rows else {})

    @healing
    def stored_units_of(
        self, run_id: str, systems: Sequence[str], question_ids: Sequence[str]
    ) -> dict[tuple[str, str], StoredUnit]:
        """What is stored per (system, question_id) for these systems and samples of a run (one chunk of a
        resume: the lookups use the unique index on (run, system, question_id))."""
        o = t.outputs.c
        units: dict[tuple[str, str], StoredUnit] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(question_ids), KEYS_PER_QUERY):
                chunk = list(question_ids[start : start + KEYS_PER_QUERY])
                query = select(o.id, o.system, o.question_id, o.status).where(
                    o.run_id == run_id, o.system.in_(list(systems)), o.question_id.in_(chunk)
                )
                units.update(self._with_labels(conn, conn.execute(query).all()))
        return units

    @healing
    def has_outputs(self, run_id: str) -> bool:
        """Whether anything is stored for the run (a resume), without reading it."""
        with self.engine.connect() as conn:
            return conn.execute(select(t.outputs.c.id).where(t.outputs.c.run_id == run_id).limit(1)).first() is not None

    def _with_labels(self, conn: Any, rows: Sequence[Any]) -> dict[tuple[str, str], StoredUnit]:
        """StoredUnits for output rows (id, system, question_id, status), with their stored labels and repeats."""
        units: dict[tuple[str, str], StoredUnit] = {}
        by_id: dict[int, StoredUnit] = {}
        for row in rows:
            unit = StoredUnit(row.id, row.status, set(), set())
            units[(row.system, row.question_id)] = by_id[row.id] = unit
        ids = list(by_id)
        for start in range(0, len(ids), KEYS_PER_QUERY):
            chunk = ids[start : start + KEYS_PER_QUERY]
            for table, column, prefix in ((t.metric_values, "metric", ""), (t.judgements, "judge", "judge:")):
                c = table.c
                query = select(c.output_id, c[column], c.repeat, c.calls + c.cache_hits).where(c.output_id.in_(chunk))
                for output_id, label, repeat, calls in conn.execute(query):
                    unit = by_id[output_id]
                    if repeat:
                        unit.repeats.add((prefix + label, repeat))
                        continue
                    (unit.metrics if not prefix else unit.judges).add(label)
                    if calls:
                        unit.calling.add(prefix + label)
        return units

    @healing
    def reusable_outputs(
        self, run_id: str, system_keys: Sequence[str], sample_keys: Sequence[str] | None = None
    ) -> dict[tuple[str, str], int]:
        """(system key, sample key) -> id of the newest ok output of another run with those keys (only these
        ``sample_keys`` when given: one chunk of a run)."""
        if not system_keys:
            return {}
        o = t.outputs.c
        where = [o.system_key.in_(list(system_keys)), o.status == "ok", o.run_id != run_id]
        query = select(o.system_key, o.sample_key, func.max(o.id)).group_by(o.system_key, o.sample_key)
        found: dict[tuple[str, str], int] = {}
        with self.engine.connect() as conn:
            if sample_keys is None:
                return {(key, sample): id_ for key, sample, id_ in conn.execute(query.where(*where))}
            for start in range(0, len(sample_keys), KEYS_PER_QUERY):
                chunk = list(sample_keys[start : start + KEYS_PER_QUERY])
                rows = conn.execute(query.where(*where, o.sample_key.in_(chunk)))
                found.update({(key, sample): id_ for key, sample, id_ in rows})
        return found

    @healing
    def has_reusable(self, run_id: str, system_keys: Sequence[str]) -> bool:
        """Whether another run stored an ok output of one of these system keys (else nothing can be reused)."""
        o = t.outputs.c
        query = select(o.id).where(o.system_key.in_(list(system_keys)), o.status == "ok", o.run_id != run_id)
        with self.engine.connect() as conn:
            return bool(system_keys) and conn.execute(query.limit(1)).first() is not None

    @healing
    def reusable_values(self, output_id: int, context: WriteContext) -> dict[str, MetricValue | Judgement]:
        """Values stored for ``output_id`` by a metric or judge with the same spec as a current label
        (metric labels as is, judge labels as ``judge:<label>``), relabelled to the current label."""
        by_metric_key = {key: label for label, key in context.metric_keys.items()}
        by_judge_key = {key: label for label, key in context.judge_keys.items()}
        found: dict[str, MetricValue | Judgement] = {}
        for value, key in self._metric_models(output_id):
            if key in by_metric_key:
                found[by_metric_key[key]] = value.model_copy(update={"metric": by_metric_key[key]})
        for judgement, key in self._judgement_models(output_id):
            if key in by_judge_key:
                found[f"judge:{by_judge_key[key]}"] = judgement.model_copy(update={"judge": by_judge_key[key]})
        return found

    @healing
    def metric_values(self, output_id: int) -> dict[str, float | None]:
        """label -> stored value (None when unscored) of one output."""
        return {value.metric: value.value for value, _ in self._metric_models(output_id)}

    @healing
    def metric_value_models(self, output_id: int) -> list[MetricValue]:
        """Every stored metric value of one output, all repeats."""
        return [value for value, _ in self._metric_models(output_id, all_repeats=True)]

    @healing
    def judgement_models(self, output_id: int) -> list[Judgement]:
        """Every stored judgement of one output, all repeats."""
        return [judgement for judgement, _ in self._judgement_models(output_id, all_repeats=True)]

    def _metric_models(self, output_id: int, *, all_repeats: bool = False) -> list[tuple[MetricValue, str | None]]:
        query = select(t.metric_values).where(t.metric_values.c.output_id == output_id)
        if not all_repeats:
            query = query.where(t.metric_values.c.repeat == 0)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            (
                MetricValue(
                    metric=r.metric,
                    value=r.value,
                    unscored_reason=r.unscored_reason,
                    details=json.loads(r.details_json) if r.details_json else {},
                    usage=_usage(r),
                    repeat=r.repeat,
                ),
                r.metric_key,
            )
            for r in rows
        ]

    def _judgement_models(self, output_id: int, *, all_repeats: bool = False) -> list[tuple[Judgement, str | None]]:
        query = select(t.judgements).where(t.judgements.c.output_id == output_id)
        if not all_repeats:
            query = query.where(t.judgements.c.repeat == 0)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            (
                Judgement(
                    judge=r.judge,
                    verdict=r.verdict,
                    score=r.score,
                    explanation=r.explanation or "",
                    judge_id=r.judge_id or "",
                    details=json.loads(r.details_json) if r.details_json else {},
                    usage=_usage(r),
                    repeat=r.repeat,
                ),
                r.judge_key,
            )
            for r in rows
        ]

    @healing
    def load_output(self, output_id: int) -> RAGOutput:
        with self.engine.connect() as conn:
            raw = conn.execute(select(t.outputs.c.output_json).where(t.outputs.c.id == output_id)).scalar_one()
            keys = keys_of(raw)
            return unpack(raw, fetch_texts(conn, keys) if keys else {})

    def settle_units(self, results: Sequence[UnitResult], context: WriteContext) -> list[UnitResult]:
        """``results`` settled into the rows :meth:`write_units` writes for them (:func:`ragassay.store.rows.settled`):
        what a run keeps until their batch is written."""
        return [settled(result, context) for result in results]

    def write_units(
        self,
        run_id: str,
        results: Sequence[UnitResult],
        context: WriteContext | None = None,
        *,
        replace_existing: bool = False,
    ) -> None:
        """Write a batch of unit results in one transaction (all or nothing), retrying transient database errors
        (a retry gets every output id from the database again, never from the failed attempt) and raising
        :class:`~ragassay.errors.StoreUnavailableError` for permanent ones. The results are not modified, so a
        batch may be written again after any failure.

        :param replace_existing: fresh results (no ``output_id``, no ``replaces``) first delete whatever is stored
            for the same (run, system, question_id), and a conflict with a concurrent writer is retried, so a unit
            computed twice is stored once (see :mod:`ragassay.store.writes`). Off by default: a second write of a
            stored unit is then an IntegrityError.
        """
        if context is None:
            from ..llm.pricing import PriceTable

            context = WriteContext(PriceTable())
        write_batch(self.engine, run_id, results, context, replace_existing=replace_existing, healer=self.healer)

    # -- plumbing -------------------------------------------------------------------------------

    def _begin(self):
        return self.engine.begin()

    # -- what a run needs besides rows (ragassay.store.protocols.ResultsWriter) ------------------

    @property
    def worker_url(self) -> str | None:
        """The database URL (password included) that Ray workers open to write their own results."""
        return self.engine.url.render_as_string(hide_password=False)

    @property
    def concurrent_writers(self) -> bool:
        """Whether many processes write well at once: a server database yes, a SQLite file (one writer at a
        time) no, so with ``[project.ray] write = "auto"`` workers send their results to this process."""
        return self.engine.dialect.name != "sqlite"

    @property
    def recoveries(self) -> list[str]:
        """Outages of the database this store waited out (see :class:`~ragassay.store.healing.Healer`)."""
        return self.healer.recoveries

    def lease(self, key: str, *, wait: bool = False, on_wait: Any = None) -> Any:
        """Take the run lease ``key`` in this database (:func:`ragassay.store.lease.acquire`)."""
        from .lease import acquire

        return acquire(self.engine, key, wait=wait, on_wait=on_wait, healer=self.healer)

    def close(self) -> None:
        self.engine.dispose()


def _sample_pairs(samples: Iterable[Sample | tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """(question_id, sample JSON) of samples given as either."""
    for sample in samples:
        yield (sample.question_id, sample.model_dump_json()) if isinstance(sample, Sample) else sample


def _usage(row: Any) -> TokenUsage:
    """The stored usage of a metric value or judgement row (totals only)."""
    return TokenUsage(
        input_tokens=row.input_tokens or 0,
        output_tokens=row.output_tokens or 0,
        cached_tokens=row.cached_tokens or 0,
        reasoning_tokens=getattr(row, "reasoning_tokens", 0) or 0,
        calls=row.calls or 0,
        cache_hits=row.cache_hits or 0,
    )
