"""``ragassay.load_run``: a stored run as pandas DataFrames, for notebooks.

::

    import ragassay

    frames = ragassay.load_run(config="examples/quickstart")  # the newest run of that project
    frames.scores().groupby("system").mean()                   # mean of every metric and judge per system
    frames.metrics.query("value.isna()")[["system", "question_id", "metric", "unscored_reason"]]
    frames.outputs.loc["bm25"].sort_values("latency_s").tail()

The frames are read from the results database through :class:`~ragassay.store.ResultsStore`; nothing is
recomputed. Rows come in the run's order (systems as configured, samples as in the dataset, metrics and judges
as configured, then repeats), so the same run gives the same frames in every process. See docs/results.md.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..results.model import OutputRecord, RunData, ScoreRecord

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

OUTPUT_COLUMNS = [
    "status",  # ok | failed | missing (no stored output: the run was interrupted)
    "answer",
    "context_count",
    "context_ids",
    "context_document_ids",
    "retrieved",
    "latency_s",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "calls",
    "cache_hits",
    "cost_usd",
    "unpriced",
    "error",
    "reused_from",
]
COST_COLUMNS = ["input_tokens", "output_tokens", "cached_tokens", "calls", "cache_hits", "cost_usd", "unpriced"]
METRIC_COLUMNS = ["system", "question_id", "metric", "repeat", "value", "unscored_reason", *COST_COLUMNS, "details"]
JUDGEMENT_COLUMNS = [
    "system",
    "question_id",
    "judge",
    "repeat",
    "verdict",
    "score",
    "explanation",
    "judge_id",
    *COST_COLUMNS,
    "details",
]
_LONG = ["system", "question_id", "column", "value"]
_COUNTS = ["input_tokens", "output_tokens", "cached_tokens", "calls", "cache_hits"]


@dataclasses.dataclass(frozen=True, eq=False)
class RunFrames:
    """One stored run as DataFrames (see docs/results.md for every column).

    :ivar run: the run's metadata: ``id``, ``created``, ``config_path``, ``description``, ``warnings``, ``state``,
        ``systems``, ``metrics``, ``judges``, ``totals`` (tokens, calls and cost of the systems and of the
        evaluation; a cost is None when a model has no price), the stored ``config`` and ``spec``.
    :ivar samples: one row per sample, indexed by ``question_id``: the declared fields, ``metadata.<key>``
        columns and one column per free attribute.
    :ivar outputs: one row per (system, question_id) of the run, indexed by both; ``status`` is ``ok``,
        ``failed`` or ``missing`` (never stored: an interrupted run).
    :ivar metrics: long format, one row per stored (system, question_id, metric, repeat); ``value`` is NaN
        exactly when unscored, and ``unscored_reason`` says why.
    :ivar judgements: long format, one row per stored (system, question_id, judge, repeat).
    :ivar costs: one row per system: the systems' own tokens, calls and cost and the evaluation's (``eval_*``).
    """

    run: dict[str, Any]
    samples: pd.DataFrame
    outputs: pd.DataFrame
    metrics: pd.DataFrame
    judgements: pd.DataFrame
    costs: pd.DataFrame

    def scores(self) -> pd.DataFrame:
        """Repeat 0 of every metric and judge score, wide: indexed by (system, question_id) like ``outputs``,
        one column per metric, then ``judge:<label>`` per judge. NaN where unscored, failed or missing (see
        ``metrics.unscored_reason`` and ``outputs.status``).

        >>> frames.scores().groupby("system").mean()  # doctest: +SKIP
        """
        import pandas as pd

        metrics = self.metrics.loc[self.metrics["repeat"] == 0, ["system", "question_id", "metric", "value"]]
        judged = self.judgements.loc[self.judgements["repeat"] == 0, ["system", "question_id", "judge", "score"]]
        judged = judged.assign(judge="judge:" + judged["judge"])
        long = pd.concat([metrics.set_axis(_LONG, axis=1), judged.set_axis(_LONG, axis=1)], ignore_index=True)
        columns = self.run["metrics"] + [f"judge:{j}" for j in self.run["judges"]]
        columns += sorted(set(long["column"]) - set(columns))
        wide = long.pivot(index=["system", "question_id"], columns="column", values="value")
        wide = wide.reindex(index=self.outputs.index, columns=columns).astype(float)
        wide.columns.name = None
        return wide


def frames_of(data: RunData) -> RunFrames:
    """Every frame of a run read with payloads (:func:`ragassay.results.read_run`)."""
    from ..analysis.usage import run_totals, system_usage

    usage = [system_usage(data, system) for system in data.systems]
    return RunFrames(
        run=_run_info(data, run_totals(usage)),
        samples=data.samples_frame(),
        outputs=_outputs_frame(data),
        metrics=_values_frame(data, "metric", METRIC_COLUMNS, "value"),
        judgements=_values_frame(data, "judge", JUDGEMENT_COLUMNS, "score"),
        costs=_costs_frame(usage),
    )


def _run_info(data: RunData, totals: list) -> dict[str, Any]:
    info = data.info
    total = dataclasses.asdict(totals[0]) if totals else {}
    total.pop("run_id", None)
    return {
        "id": info.id,
        "project": info.project,
        "config_path": info.config_path,
        "description": info.description,
        "created": datetime.fromtimestamp(info.created_at, tz=timezone.utc),
        "updated": datetime.fromtimestamp(info.updated_at, tz=timezone.utc),
        "state": info.state,
        "state_detail": info.state_detail,
        "ragassay_version": info.ragassay_version,
        "sample_count": info.sample_count,
        "systems": list(data.systems),
        "metrics": list(info.spec.get("metrics") or {}),
        "judges": list(info.spec.get("judges") or {}),
        "warnings": list(info.warnings),
        "totals": total,
        "config": info.config,
        "spec": info.spec,
    }


def _outputs_frame(data: RunData) -> pd.DataFrame:
    import pandas as pd

    records = [
        _output_record(data.output(system, qid), data.payload(system, qid))
        for system in data.systems
        for qid in data.question_ids
    ]
    index = pd.MultiIndex.from_product([data.systems, data.question_ids], names=["system", "question_id"])
    frame = pd.DataFrame.from_records(records, columns=OUTPUT_COLUMNS, index=index)
    counts = [*_COUNTS, "context_count", "reused_from"]
    frame[counts] = frame[counts].astype("Int64")  # NA where the output is missing
    frame["retrieved"] = frame["retrieved"].astype("boolean")
    return frame.astype({"latency_s": float, "cost_usd": float})


def _output_record(row: OutputRecord | None, output: Any) -> dict[str, Any]:
    if row is None:
        return {"status": "missing"}
    u = row.usage
    ids = list(output.context_ids) if output else []
    return {
        "status": row.status,
        "latency_s": row.latency_s,
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cached_tokens": u.cached_tokens,
        "calls": u.calls,
        "cache_hits": u.cache_hits,
        "cost_usd": u.cost_usd,
        "unpriced": ",".join(u.unpriced) or None,
        "error": row.error,
        "answer": output.answer if output else None,
        "context_count": len(output.context_ids or output.contexts) if output else None,
        "context_ids": ids,
        "context_document_ids": list(output.context_document_ids) if output else [],
        "retrieved": row.retrieved,
        "reused_from": row.reused_from,
    }


def _values_frame(data: RunData, kind: str, columns: list[str], value: str) -> pd.DataFrame:
    """Metric values or judgements in the run's order; ``value`` (the number column) NaN where None."""
    import pandas as pd

    records = [_score_record(s, kind) for s in data.ordered_scores(kind)]
    frame = pd.DataFrame.from_records(records, columns=columns)
    frame[_COUNTS + ["repeat"]] = frame[_COUNTS + ["repeat"]].astype("int64")
    return frame.astype({value: float, "cost_usd": float})


def _score_record(s: ScoreRecord, kind: str) -> dict[str, Any]:
    u = s.usage
    record = {
        "system": s.system,
        "question_id": s.question_id,
        kind: s.label,
        "repeat": s.repeat,
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cached_tokens": u.cached_tokens,
        "calls": u.calls,
        "cache_hits": u.cache_hits,
        "cost_usd": u.cost_usd,
        "unpriced": ",".join(u.unpriced) or None,
        "details": s.details,
    }
    if kind == "metric":
        return record | {"value": s.value, "unscored_reason": s.unscored_reason}
    return record | {"verdict": s.verdict, "score": s.value, "explanation": s.explanation, "judge_id": s.judge_id}


def _costs_frame(rows: list) -> pd.DataFrame:
    """Per system: outputs, the systems' own usage and cost, and the evaluation's (``eval_*``)."""
    import pandas as pd

    records = [
        {
            "system": r.system,
            "samples": r.samples,
            "outputs": r.outputs,
            "failed": r.failed,
            "missing": r.missing,
            "input_tokens": r.input_tokens,
            "output_tokens": r.output_tokens,
            "calls": r.calls,
            "cache_hits": r.cache_hits,
            "cost_usd": r.cost_usd,
            "unpriced_models": ", ".join(r.unpriced_models),
            "mean_latency_s": r.mean_latency_s,
            **{f"eval_{k}": v for k, v in dataclasses.asdict(r.evaluation).items() if k != "unpriced"},
            "eval_unpriced_models": ", ".join(r.evaluation.unpriced),
        }
        for r in rows
    ]
    frame = pd.DataFrame.from_records(records).set_index("system")
    return frame.astype({"cost_usd": float, "eval_cost_usd": float, "mean_latency_s": float})
