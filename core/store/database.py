"""ResultsStore: open, migrate, write batches of results, read them back."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any, Sequence

from sqlalchemy import create_engine, delete, event, func, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DatabaseError, OperationalError, SQLAlchemyError

from ..errors import StoreError
from ..models import Judgement, MetricValue, RAGOutput, Sample
from . import schema as t
from .lease import live_holders, run_state
from .migrations import current_version, migrate


def store_url(results: str, base_dir: Path) -> str:
    """A SQLAlchemy URL from a config value: URLs are kept, paths become SQLite files under ``base_dir``."""
    if "://" in results:
        return results
    path = Path(results).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return f"sqlite:///{path}"


@dataclasses.dataclass
class UnitResult:
    """Everything produced for one (system, sample): written in one transaction."""

    system: str
    question_id: str
    status: str  # ok | failed
    output: RAGOutput | None = None
    error: str | None = None
    metrics: list[MetricValue] = dataclasses.field(default_factory=list)
    judgements: list[Judgement] = dataclasses.field(default_factory=list)
    output_id: int | None = None  # set when only metrics/judgements are added to a stored output
    replaces: int | None = None  # id of a failed output this result replaces


@dataclasses.dataclass
class StoredUnit:
    """What is already stored for one (system, sample)."""

    output_id: int
    status: str
    metrics: set[str]
    judges: set[str]


class ResultsStore:
    """The results database of a project."""

    def __init__(self, engine: Engine):
        self.engine = engine

    # -- runs -----------------------------------------------------------------------------------

    def find_run(self, fingerprint: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(t.runs).where(t.runs.c.fingerprint == fingerprint).order_by(t.runs.c.created_at.desc())
            ).first()
        return dict(row._mapping) if row else None

    def create_run(self, run: dict[str, Any], systems: Sequence[tuple[str, str]], samples: Sequence[Sample]) -> None:
        """Insert a run with its systems (name, spec json) and samples, atomically."""
        now = time.time()
        with self._begin() as conn:
            conn.execute(insert(t.runs).values(**run, created_at=now, updated_at=now, status="running"))
            conn.execute(insert(t.run_systems), [
                {"run_id": run["id"], "name": n, "position": i, "spec_json": s} for i, (n, s) in enumerate(systems)
            ])
            conn.execute(insert(t.run_samples), [
                {"run_id": run["id"], "question_id": s.question_id, "position": i, "sample_json": s.model_dump_json()}
                for i, s in enumerate(samples)
            ])

    def set_run_status(self, run_id: str, status: str) -> None:
        with self._begin() as conn:
            conn.execute(update(t.runs).where(t.runs.c.id == run_id).values(status=status, updated_at=time.time()))

    def list_runs(self) -> list[dict[str, Any]]:
        """Runs, newest first, with output and failure counts, and ``state`` (running, complete, interrupted)."""
        counts = (
            select(
                t.outputs.c.run_id,
                func.count().label("outputs"),
                func.sum((t.outputs.c.status == "failed").cast(t.Integer)).label("failed"),
            ).group_by(t.outputs.c.run_id).subquery()
        )
        systems = select(t.run_systems.c.run_id, func.count().label("systems")).group_by(t.run_systems.c.run_id).subquery()
        query = (
            select(t.runs, func.coalesce(counts.c.outputs, 0).label("outputs"),
                   func.coalesce(counts.c.failed, 0).label("failed"), func.coalesce(systems.c.systems, 0).label("systems"))
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

    def get_run(self, run_id: str) -> dict[str, Any]:
        """A run by id or unique id prefix; raises :class:`StoreError` naming the known runs."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.runs).where(t.runs.c.id.startswith(run_id, autoescape=True))).all()
        if len(rows) == 1:
            return dict(rows[0]._mapping)
        known = ", ".join(r["id"][:12] for r in self.list_runs()[:10]) or "none"
        problem = "is ambiguous" if rows else "not found"
        raise StoreError(f"run '{run_id}' {problem}. Known runs: {known}. List them with: ragassay runs")

    def run_systems(self, run_id: str) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.run_systems).where(t.run_systems.c.run_id == run_id)
                                .order_by(t.run_systems.c.position))
            return [dict(r._mapping) for r in rows]

    def run_samples(self, run_id: str) -> list[Sample]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.run_samples.c.sample_json).where(t.run_samples.c.run_id == run_id)
                                .order_by(t.run_samples.c.position))
            return [Sample.model_validate_json(r[0]) for r in rows]

    # -- units ----------------------------------------------------------------------------------

    def stored_units(self, run_id: str) -> dict[tuple[str, str], StoredUnit]:
        """What is stored per (system, question_id) in a run: used to resume."""
        units: dict[tuple[str, str], StoredUnit] = {}
        by_id: dict[int, StoredUnit] = {}
        with self.engine.connect() as conn:
            for row in conn.execute(select(t.outputs.c.id, t.outputs.c.system, t.outputs.c.question_id,
                                           t.outputs.c.status).where(t.outputs.c.run_id == run_id)):
                unit = StoredUnit(row.id, row.status, set(), set())
                units[(row.system, row.question_id)] = by_id[row.id] = unit
            ids = select(t.outputs.c.id).where(t.outputs.c.run_id == run_id)
            for row in conn.execute(select(t.metric_values.c.output_id, t.metric_values.c.metric)
                                    .where(t.metric_values.c.output_id.in_(ids))):
                by_id[row.output_id].metrics.add(row.metric)
            for row in conn.execute(select(t.judgements.c.output_id, t.judgements.c.judge)
                                    .where(t.judgements.c.output_id.in_(ids))):
                by_id[row.output_id].judges.add(row.judge)
        return units

    def load_output(self, output_id: int) -> RAGOutput:
        with self.engine.connect() as conn:
            raw = conn.execute(select(t.outputs.c.output_json).where(t.outputs.c.id == output_id)).scalar_one()
        return RAGOutput.model_validate_json(raw)

    def write_units(self, run_id: str, results: Sequence[UnitResult]) -> None:
        """Write a batch of unit results in one transaction (all or nothing)."""
        now = time.time()
        with self._begin() as conn:
            replaced = [r.replaces for r in results if r.replaces is not None]
            if replaced:
                conn.execute(delete(t.metric_values).where(t.metric_values.c.output_id.in_(replaced)))
                conn.execute(delete(t.judgements).where(t.judgements.c.output_id.in_(replaced)))
                conn.execute(delete(t.outputs).where(t.outputs.c.id.in_(replaced)))
            fresh = [r for r in results if r.output_id is None]
            if fresh:
                ids = conn.execute(
                    insert(t.outputs).returning(t.outputs.c.id, sort_by_parameter_order=True),
                    [_output_row(run_id, r, now) for r in fresh],
                ).scalars().all()
                for result, output_id in zip(fresh, ids):
                    result.output_id = output_id
            metric_rows = [_metric_row(r.output_id, m) for r in results for m in r.metrics]
            if metric_rows:
                conn.execute(insert(t.metric_values), metric_rows)
            judge_rows = [_judgement_row(r.output_id, j) for r in results for j in r.judgements]
            if judge_rows:
                conn.execute(insert(t.judgements), judge_rows)
            conn.execute(update(t.runs).where(t.runs.c.id == run_id).values(updated_at=now))

    # -- reading results ------------------------------------------------------------------------

    def metric_rows(self, run_id: str) -> list[dict[str, Any]]:
        """One row per (output, metric), with the output's system and status."""
        query = (
            select(t.outputs.c.system, t.outputs.c.question_id, t.metric_values.c.metric,
                   t.metric_values.c.value, t.metric_values.c.unscored_reason)
            .join(t.metric_values, t.metric_values.c.output_id == t.outputs.c.id)
            .where(t.outputs.c.run_id == run_id)
        )
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def judgement_rows(self, run_id: str) -> list[dict[str, Any]]:
        query = (
            select(t.outputs.c.system, t.outputs.c.question_id, t.judgements.c.judge, t.judgements.c.score,
                   t.judgements.c.verdict)
            .join(t.judgements, t.judgements.c.output_id == t.outputs.c.id)
            .where(t.outputs.c.run_id == run_id)
        )
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def output_rows(self, run_id: str) -> list[dict[str, Any]]:
        query = select(t.outputs.c.id, t.outputs.c.system, t.outputs.c.question_id, t.outputs.c.status,
                       t.outputs.c.error, t.outputs.c.latency_s, t.outputs.c.input_tokens,
                       t.outputs.c.output_tokens).where(t.outputs.c.run_id == run_id)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def output_payloads(self, run_id: str, *, ok_only: bool = True) -> list[tuple[str, str, RAGOutput]]:
        """(system, question_id, output) for the stored outputs of a run (ok ones only, by default)."""
        query = select(t.outputs.c.system, t.outputs.c.question_id, t.outputs.c.output_json).where(
            t.outputs.c.run_id == run_id, t.outputs.c.output_json.is_not(None))
        if ok_only:
            query = query.where(t.outputs.c.status == "ok")
        with self.engine.connect() as conn:
            return [(s, q, RAGOutput.model_validate_json(raw)) for s, q, raw in conn.execute(query)]

    def sample_detail(self, run_id: str, question_id: str) -> dict[str, Any]:
        """A sample with every system's output, metric values and judgements."""
        with self.engine.connect() as conn:
            raw = conn.execute(select(t.run_samples.c.sample_json).where(
                t.run_samples.c.run_id == run_id, t.run_samples.c.question_id == question_id)).scalar()
            if raw is None:
                raise StoreError(f"run {run_id[:12]} has no sample '{question_id}'. "
                                 f"Sample ids are the question_id values of the dataset.")
            outs = conn.execute(select(t.outputs).where(t.outputs.c.run_id == run_id,
                                                        t.outputs.c.question_id == question_id)).all()
            detail = {"sample": Sample.model_validate_json(raw), "outputs": []}
            for out in outs:
                metrics = conn.execute(select(t.metric_values).where(t.metric_values.c.output_id == out.id)).all()
                judges = conn.execute(select(t.judgements).where(t.judgements.c.output_id == out.id)).all()
                detail["outputs"].append({
                    "row": dict(out._mapping),
                    "output": RAGOutput.model_validate_json(out.output_json) if out.output_json else None,
                    "metrics": [dict(m._mapping) for m in metrics],
                    "judgements": [dict(j._mapping) for j in judges],
                })
        return detail

    # -- plumbing -------------------------------------------------------------------------------

    def _begin(self):
        return self.engine.begin()

    def close(self) -> None:
        self.engine.dispose()


def _output_row(run_id: str, r: UnitResult, now: float) -> dict[str, Any]:
    out = r.output
    return {
        "run_id": run_id, "system": r.system, "question_id": r.question_id, "status": r.status, "error": r.error,
        "answer": out.answer if out else None,
        "output_json": out.model_dump_json() if out else None,
        "latency_s": out.latency_s if out else None,
        "input_tokens": out.usage.input_tokens if out else 0,
        "output_tokens": out.usage.output_tokens if out else 0,
        "created_at": now,
    }


def _metric_row(output_id: int | None, m: MetricValue) -> dict[str, Any]:
    return {"output_id": output_id, "metric": m.metric, "value": m.value, "unscored_reason": m.unscored_reason,
            "details_json": json.dumps(m.details) if m.details else None}


def _judgement_row(output_id: int | None, j: Judgement) -> dict[str, Any]:
    return {"output_id": output_id, "judge": j.judge, "verdict": j.verdict, "score": j.score,
            "explanation": j.explanation, "judge_id": j.judge_id}


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def _lock_for_migration(conn: Any) -> None:
    """On SQLite, migrate under the write lock, so two processes opening a new file do not both create it."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def open_store(url: str, *, create: bool = True) -> ResultsStore:
    """Open (and migrate) the results database at ``url``.

    Refuses a database written by a newer ragassay, and a file that is not a database, with a clear message.
    """
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        if not create and not path.exists():
            raise StoreError(f"no results database at {path}. Run 'ragassay run CONFIG' first.")
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
    try:
        engine = create_engine(url)
    except (SQLAlchemyError, ImportError, ValueError) as exc:
        raise StoreError(f"cannot use results database URL {url!r}: {exc}") from exc
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    try:
        with engine.begin() as conn:
            version = current_version(conn)
            if version > t.SCHEMA_VERSION:
                raise StoreError(
                    f"results database {url} has schema version {version}, newer than this ragassay "
                    f"understands ({t.SCHEMA_VERSION}). Upgrade ragassay; the database was not modified."
                )
            if version < t.SCHEMA_VERSION:
                _lock_for_migration(conn)
                migrate(conn, t.SCHEMA_VERSION)
    except (DatabaseError, OperationalError) as exc:
        engine.dispose()
        raise StoreError(f"cannot open results database {url}: {exc.orig}. Is it a ragassay results file?") from exc
    return ResultsStore(engine)
