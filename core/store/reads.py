"""What the read model asks of a results store (:func:`ragassay.results.read_run`): one statement per table.

:class:`RunReads` is mixed into :class:`~ragassay.store.ResultsStore`. Every method returns plain tuples in the
column order named by the matching ``*_COLUMNS`` constant, so a backend other than SQLAlchemy (see
:class:`ragassay.store.protocols.ResultsReader`) can answer with the same shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from . import schema as t
from .lease import Holder, stale_reason

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

    def sample_rows(self, run_id: str) -> list[tuple[str, str]]:
        """(question_id, sample_json) of every sample of the run, in dataset order."""
        c = t.run_samples.c
        query = select(c.question_id, c.sample_json).where(c.run_id == run_id).order_by(c.position)
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]

    def output_records(self, run_id: str, *, payloads: bool = False) -> list[tuple]:
        """One tuple per stored output (:data:`OUTPUT_COLUMNS`, then ``output_json`` when ``payloads``)."""
        o = t.outputs.c
        columns = [o[name] for name in OUTPUT_COLUMNS] + ([o.output_json] if payloads else [])
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(select(*columns).where(o.run_id == run_id))]

    def score_records(self, run_id: str, kind: str) -> list[tuple]:
        """Every metric value (``kind="metric"``: :data:`METRIC_COLUMNS`) or judgement (``"judge"``:
        :data:`JUDGEMENT_COLUMNS`) of the run, all repeats."""
        table, names = (t.metric_values, METRIC_COLUMNS) if kind == "metric" else (t.judgements, JUDGEMENT_COLUMNS)
        columns = [t.outputs.c.system, t.outputs.c.question_id] + [table.c[name] for name in names[2:]]
        query = (
            select(*columns).join(t.outputs, t.outputs.c.id == table.c.output_id).where(t.outputs.c.run_id == run_id)
        )
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]

    def run_holder(self, run_id: str) -> Holder | None:
        """The live lease on the run (a process working on it now), or None."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.run_leases).where(t.run_leases.c.run_id == run_id)).all()
        live = [Holder(**row._mapping) for row in rows]
        return next((h for h in live if stale_reason(h) is None), None)

    def payload_records(self, run_id: str, question_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(system, question_id, output_json) of the stored outputs of the given samples."""
        o = t.outputs.c
        query = select(o.system, o.question_id, o.output_json).where(
            o.run_id == run_id, o.question_id.in_(list(question_ids)), o.output_json.is_not(None)
        )
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]
