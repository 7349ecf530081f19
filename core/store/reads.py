"""What the read model asks of a results store (:func:`ragassay.results.read_run`): one statement per table.

:class:`RunReads` is mixed into :class:`~ragassay.store.ResultsStore`. Every method returns plain tuples in the
column order named by the matching ``*_COLUMNS`` constant, so a backend other than SQLAlchemy (see
:class:`ragassay.store.protocols.ResultsReader`) can answer with the same shapes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import select

from . import schema as t
from .contexts import fetch_texts
from .healing import Healer, healing, healing_stream
from .lease import Holder, stale_reason

_BATCH = 10_000  # rows fetched at a time by a streamed read
_LEASE = ("key", "run_id", "owner", "host", "pid", "acquired_at", "heartbeat_at")
OUTPUT_COLUMNS = (
    "system",
    "question_id",
    "status",
    "error",
    "latency_s",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "calls",
    "cache_hits",
    "cost_usd",
    "unpriced",
    "retrieved",
    "retrieved_count",
    "reused_from",
)
USAGE_COLUMNS = ("input_tokens", "output_tokens", "cached_tokens", "calls", "cache_hits", "cost_usd", "unpriced")
METRIC_COLUMNS = (
    "system",
    "question_id",
    "metric",
    "repeat",
    "value",
    "unscored_reason",
    "details_json",
    *USAGE_COLUMNS,
)
JUDGEMENT_COLUMNS = (
    "system",
    "question_id",
    "judge",
    "repeat",
    "score",
    "verdict",
    "explanation",
    "judge_id",
    "details_json",
    *USAGE_COLUMNS,
)


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
    def score_records(self, run_id: str, kind: str) -> Iterator[tuple]:
        """Every metric value (``kind="metric"``: :data:`METRIC_COLUMNS`) or judgement (``"judge"``:
        :data:`JUDGEMENT_COLUMNS`) of the run, all repeats, streamed in batches (one statement)."""
        table, names = (t.metric_values, METRIC_COLUMNS) if kind == "metric" else (t.judgements, JUDGEMENT_COLUMNS)
        columns = [t.outputs.c.system, t.outputs.c.question_id] + [table.c[name] for name in names[2:]]
        query = (
            select(*columns).join(t.outputs, t.outputs.c.id == table.c.output_id).where(t.outputs.c.run_id == run_id)
        )
        with self.engine.connect() as conn:
            for row in conn.execution_options(yield_per=_BATCH).execute(query):
                yield tuple(row)

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
