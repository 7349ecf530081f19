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
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, RagassayError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .store.database import ResultsStore

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


def load_run(run: str | None = None, *, config: str | Path = ".", db: str | None = None) -> RunFrames:
    """Read a stored run into DataFrames (samples, outputs, metric values, judgements, costs).

    :param run: a run id or a unique prefix of one; default: the newest run in the database.
    :param config: the project: a config file, or a folder with ``ragassay.toml``; its ``[project] results``
        names the database.
    :param db: a results database (SQLite path or SQLAlchemy URL) to read instead of the project's.
    :raises ragassay.errors.StoreError: no results database, no run yet, or no (single) run matching ``run``.

    >>> frames = ragassay.load_run(config="examples/quickstart")  # doctest: +SKIP
    >>> frames.scores().groupby("system").mean()                 # doctest: +SKIP
    """
    from .store.locate import looks_like_project, open_results, pick_run

    try:
        store = open_results(config, db)
        try:
            return _read(store, pick_run(store, run))
        finally:
            store.close()
    except RagassayError as exc:
        if run and looks_like_project(run):
            raise ConfigError(
                f"'{run}' is a project, not a run id; give it as ragassay.load_run(config={str(run)!r})"
            ) from exc
        raise


def _read(store: ResultsStore, run: dict[str, Any]) -> RunFrames:
    """Every frame of ``run`` (a row of the runs table)."""
    from .analysis.comparison import run_totals, summarize_runs

    run_id = run["id"]
    samples = store.run_samples(run_id)
    systems = [s["name"] for s in store.run_systems(run_id)]
    spec = json.loads(run["spec_json"])
    question_ids = [s.question_id for s in samples]
    order = _Order(systems, question_ids, list(spec.get("metrics") or {}))
    judge_order = _Order(systems, question_ids, list(spec.get("judges") or {}))
    cost_rows = summarize_runs(store, [run_id]).rows
    info = _run_info(store, run, spec, systems, run_totals(cost_rows))
    return RunFrames(
        run=info,
        samples=_samples_frame(samples),
        outputs=_outputs_frame(store, run_id, systems, question_ids),
        metrics=_values_frame(store.value_rows(run_id, "metric"), "metric", METRIC_COLUMNS, order, "value"),
        judgements=_values_frame(store.value_rows(run_id, "judge"), "judge", JUDGEMENT_COLUMNS, judge_order, "score"),
        costs=_costs_frame(cost_rows),
    )


class _Order:
    """Sort key of a (system, question_id, label, repeat) row: the run's order, unknown names last by name."""

    def __init__(self, systems: list[str], samples: list[str], labels: list[str]):
        self.positions = [{name: i for i, name in enumerate(names)} for names in (systems, samples, labels)]

    def key(self, row: dict[str, Any], label: str) -> tuple:
        names = (row["system"], row["question_id"], row[label])
        places = [
            (known.get(name, len(known)), "" if name in known else name) for known, name in zip(self.positions, names)
        ]
        return (*places, row["repeat"])


def _run_info(store: ResultsStore, run: dict, spec: dict, systems: list[str], totals: list) -> dict[str, Any]:
    listed = next((r for r in store.list_runs() if r["id"] == run["id"]), {})
    total = dataclasses.asdict(totals[0]) if totals else {}
    total.pop("run_id", None)
    return {
        "id": run["id"],
        "project": run["project"],
        "config_path": run["config_path"],
        "description": run["description"] or "",
        "created": datetime.fromtimestamp(run["created_at"], tz=timezone.utc),
        "updated": datetime.fromtimestamp(run["updated_at"], tz=timezone.utc),
        "state": listed.get("state", run["status"]),
        "state_detail": listed.get("state_detail", ""),
        "ragassay_version": run["ragassay_version"],
        "sample_count": run["sample_count"],
        "systems": systems,
        "metrics": list(spec.get("metrics") or {}),
        "judges": list(spec.get("judges") or {}),
        "warnings": json.loads(run["warnings_json"] or "[]"),
        "totals": total,
        "config": json.loads(run["config_json"]),
        "spec": spec,
    }


def _samples_frame(samples: list) -> pd.DataFrame:
    """The declared fields, ``metadata.<key>`` columns (nested keys joined by dots), then the free attributes."""
    import pandas as pd

    declared = ["question_id", "question", "reference_answers", "reference_contexts", "reference_context_ids"]
    declared += ["is_answerable", "group_id"]
    fields = pd.DataFrame.from_records([{n: getattr(s, n) for n in declared} for s in samples], columns=declared)
    metadata = pd.json_normalize([s.metadata for s in samples], sep=".").add_prefix("metadata.")
    attributes = pd.DataFrame([s.attributes for s in samples], index=fields.index)
    return pd.concat([fields, metadata, attributes], axis=1).set_index("question_id")


def _outputs_frame(store: ResultsStore, run_id: str, systems: list[str], question_ids: list[str]) -> pd.DataFrame:
    import pandas as pd

    rows = {(r["system"], r["question_id"]): r for r in store.output_rows(run_id)}
    payloads = {(s, q): output for s, q, output in store.output_payloads(run_id, ok_only=False)}
    records = [
        _output_record(rows.get((system, qid)), payloads.get((system, qid)))
        for system in systems
        for qid in question_ids
    ]
    index = pd.MultiIndex.from_product([systems, question_ids], names=["system", "question_id"])
    frame = pd.DataFrame.from_records(records, columns=OUTPUT_COLUMNS, index=index)
    counts = [*_COUNTS, "context_count", "reused_from"]
    frame[counts] = frame[counts].astype("Int64")  # NA where the output is missing
    frame["retrieved"] = frame["retrieved"].astype("boolean")
    return frame.astype({"latency_s": float, "cost_usd": float})


def _output_record(row: dict | None, output: Any) -> dict[str, Any]:
    if row is None:
        return {"status": "missing"}
    ids = list(output.context_ids) if output else []
    return {
        **{name: row[name] for name in ("status", "latency_s", *_COUNTS, "cost_usd", "unpriced", "error")},
        "answer": output.answer if output else None,
        "context_count": len(output.context_ids or output.contexts) if output else None,
        "context_ids": ids,
        "context_document_ids": list(output.context_document_ids) if output else [],
        "retrieved": None if row["retrieved"] is None else bool(row["retrieved"]),
        "reused_from": row["reused_from"],
    }


def _values_frame(rows: list[dict], label: str, columns: list[str], order: _Order, value: str) -> pd.DataFrame:
    """Metric values or judgements in the run's order; ``value`` (the number column) NaN where None."""
    import pandas as pd

    rows = sorted(rows, key=lambda row: order.key(row, label))
    frame = pd.DataFrame.from_records([{c: row[c] for c in columns} for row in rows], columns=columns)
    frame[_COUNTS + ["repeat"]] = frame[_COUNTS + ["repeat"]].astype("int64")
    return frame.astype({value: float, "cost_usd": float})


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
