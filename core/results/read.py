"""Reading a stored run into the read model: each table once (:func:`read_run`).

Six statements for any run size: the run with its lease (for the state), its systems, its samples, its outputs,
its metric values and its judgements. :func:`read_payloads` adds one for the outputs of a few samples. Reading
payloads adds the context texts they name by key (:mod:`ragassay.store.contexts`): one statement per 5,000
distinct texts, none when the outputs have no context.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..config.sequential import STOPPED_EARLY, stopped_detail
from ..errors import StoreError
from ..models import JUDGEMENT_COLUMNS, METRIC_COLUMNS, OUTPUT_COLUMNS, RAGOutput
from .model import OutputRecord, RunData, RunInfo, StoredRows
from .scores import TableBuilder
from .usage import Usage

_STATE_RUNNING, _STATE_COMPLETE, _STATE_INTERRUPTED = "running", "complete", "interrupted"
SETTLED = "settled"  # the status of a sequential run that stopped early (ragassay.engine.sequential.plan)
BUDGET_LIMITED = "budget-limited"  # a run session stopped by its budget (ragassay.llm.budget)
FAILED = "failed"  # its first session stopped on an error before any work (ragassay.engine.runner)
FAILED_DETAIL = "stopped on an error before any work (see its warnings); fix it and run again"
_BATCH = 10_000  # score records added to the table at a time


def read_run(store: Any, ref: str, *, payloads: bool | str = False) -> RunData:
    """The run ``ref`` (an id or unique prefix) of ``store`` (a :class:`ragassay.store.protocols.ResultsReader`).

    :param payloads: also read every output's JSON (answers and contexts), for analyses that need them (the
        GRAMMAR report's retrieved documents); ``"grouped"``: only when a sample carries a ``group_id``;
        otherwise :meth:`RunData.payload` refuses.
    :raises ragassay.errors.StoreError: no (single) run matches ``ref``, or a stored row cannot be read.
    """
    row, holder = store.run_and_holder(ref)
    run_id = row["id"]
    systems = store.run_systems(run_id)
    question_ids, sample_json = [], []
    for question_id, raw in store.sample_rows(run_id):
        question_ids.append(sys.intern(question_id))  # shared with the outputs' keys (one string per sample)
        sample_json.append(raw)
    if payloads == "grouped":
        payloads = any(json.loads(raw).get("group_id") is not None for raw in sample_json)
    outputs = {}
    for r in _output_rows(store, run_id, payloads):
        output = _output(r, payloads)
        outputs[(output.system, output.question_id)] = output
    texts = context_texts(store, [o.payload for o in outputs.values()]) if payloads else {}
    builder = TableBuilder([s["name"] for s in systems], question_ids, {q: i for i, q in enumerate(question_ids)})
    _add_scores(builder, *(_score_batches(store, run_id, kind) for kind in ("metric", "judge")))
    names = [s["name"] for s in systems]
    info = _info(row, holder, len(names), len(outputs))
    return RunData(
        info=info,
        systems=names,
        system_specs={s["name"]: _json(s["spec_json"], run_id, f"system {s['name']}") for s in systems},
        question_ids=question_ids,
        sample_json=sample_json,
        outputs=outputs,
        score_table=builder.table(),
        has_payloads=bool(payloads),
        context_texts=texts,
    )


def with_payloads(store: Any, run: RunData) -> RunData:
    """``run`` (read without payloads) with every output's JSON and the context texts it names: only the outputs
    are read again (one statement, plus the context texts), not the samples or the scores."""
    outputs = {}
    for r in _output_rows(store, run.id, True):
        output = _output(r, True)
        outputs[(output.system, output.question_id)] = output
    texts = context_texts(store, [o.payload for o in outputs.values()])
    return dataclasses.replace(run, outputs=outputs, has_payloads=True, context_texts=texts)


def read_sample(store: Any, ref: str, question_id: str) -> tuple[RunData, dict[tuple[str, str], RAGOutput]]:
    """The run ``ref`` with only the sample ``question_id`` (its outputs, metric values and judgements, all
    repeats), and that sample's stored outputs by (system, question_id): a few indexed statements whatever the
    run's size. The run's info (its state) counts every output of the run; its :attr:`RunData.stored_rows` hold
    the sample's rows with every stored column (what ``ragassay show --format json`` prints).

    :raises ragassay.errors.StoreError: no (single) run matches ``ref``, or the run has no such sample.
    """
    from ..context_keys import unpack

    if not hasattr(store, "sample_records"):
        raise StoreError(
            f"{type(store).__name__} cannot read one sample: it has no sample_records "
            "(ragassay.store.protocols.ResultsReader); use read_run, or a store from ragassay.store.open_store"
        )
    row, holder = store.run_and_holder(ref)
    run_id = row["id"]
    systems = store.run_systems(run_id)
    raw, outputs, metrics, judgements, total = store.sample_records(run_id, question_id)
    if raw is None:
        raise StoreError(
            f"run {run_id[:12]} has no sample '{question_id}'. Sample ids are the question_id values of the dataset."
        )
    names = [s["name"] for s in systems]
    question_ids = [question_id]
    builder = TableBuilder(names, question_ids, {question_id: 0})
    _add_scores(builder, [_columns(metrics, METRIC_COLUMNS)], [_columns(judgements, JUDGEMENT_COLUMNS)])
    records = _columns(outputs, (*OUTPUT_COLUMNS, "output_json"))
    texts = context_texts(store, [r[15] for r in records])
    run = RunData(
        info=_info(row, holder, len(names), total),
        systems=names,
        system_specs={s["name"]: _json(s["spec_json"], run_id, f"system {s['name']}") for s in systems},
        question_ids=question_ids,
        sample_json=[raw],
        outputs={(r[0], r[1]): _output(r, False) for r in records},
        score_table=builder.table(),
        stored_rows=StoredRows(outputs, metrics, judgements),
    )
    return run, {(r[0], r[1]): unpack(r[15], texts) for r in records if r[15] is not None}


def _columns(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> list[tuple]:
    """Stored rows (dicts) as tuples of the columns ``names``, in that order (a column a row lacks is None)."""
    return [tuple(row.get(name) for name in names) for row in rows]


def _output_rows(store: Any, run_id: str, payloads: bool) -> Iterator[tuple]:
    """The run's output records: from the store's :meth:`output_batches` when it has one (rows fetched in bulk),
    else from its :meth:`output_records`."""
    if hasattr(store, "output_batches"):
        return itertools.chain.from_iterable(store.output_batches(run_id, payloads=payloads))
    return store.output_records(run_id, payloads=payloads)


def _score_batches(store: Any, run_id: str, kind: str) -> Iterator[Sequence[tuple]]:
    """The run's score records of ``kind`` in batches: the store's own :meth:`score_batches` (one statement,
    rows fetched in bulk) when it has one, else its :meth:`score_records` cut into batches."""
    if hasattr(store, "score_batches"):
        return store.score_batches(run_id, kind)
    records = iter(store.score_records(run_id, kind))
    return iter(lambda: list(itertools.islice(records, _BATCH)), [])


def _add_scores(builder: TableBuilder, metrics: Iterable[Sequence[tuple]], judgements: Iterable[Sequence]) -> None:
    """Add batches of metric value records (``METRIC_COLUMNS``) and of judgement records (``JUDGEMENT_COLUMNS``)
    to ``builder``, column by column."""
    for batch in metrics:
        if batch:
            system, qid, label, repeat, value, reason, details, *usage = zip(*batch)
            builder.add_batch("metric", (system, qid, label, repeat, value), (reason, None, None, None, details), usage)
    for batch in judgements:
        if batch:
            system, qid, label, repeat, score, verdict, explanation, judge_id, details, *usage = zip(*batch)
            reason = [None if s is not None else (e or v) for s, e, v in zip(score, explanation, verdict)]
            texts = (reason, verdict, explanation, judge_id, details)
            builder.add_batch("judge", (system, qid, label, repeat, score), texts, usage)


def read_payloads(store: Any, run_id: str, question_ids: Sequence[str]) -> dict[tuple[str, str], RAGOutput]:
    """(system, question_id) -> the stored output, for the outputs of ``question_ids`` only (one statement)."""
    if not question_ids:
        return {}
    from ..context_keys import unpack

    records = store.payload_records(run_id, question_ids)
    texts = context_texts(store, [raw for _, _, raw in records])
    return {(s, q): unpack(raw, texts) for s, q, raw in records}


def read_labels(store: Any, run_id: str, rubric: str | None = None, *, annotator: str | None = None) -> list[Any]:
    """The human labels that count on ``run_id`` (:class:`ragassay.labels.Label`, of ``rubric`` / ``annotator``
    when given): the latest label that is not undone per (rubric, annotator, item), oldest first; none when the
    store keeps no labels (it implements no :class:`ragassay.store.protocols.LabelStore`)."""
    if not hasattr(store, "labels"):
        return []
    return list(store.labels(run_id, rubric, annotator=annotator))


def read_reusable_labels(store: Any, run: RunData, rubric: str | None = None, extra: Sequence[Any] = ()) -> Any:
    """The human labels that count on ``run`` (read with payloads), from every run of ``store`` and ``extra``
    labels (e.g. a JSONL file's), matched by the digest of the answers they judged: a
    :class:`ragassay.labels.reuse.LabelReuse` (:func:`ragassay.labels.reuse.reusable_labels`); only ``extra``
    when the store keeps no labels."""
    from ..labels.reuse import reusable_labels

    stored = store.labels_of_samples(run.question_ids, rubric) if hasattr(store, "labels") else []
    return reusable_labels(run, [*stored, *extra], rubric=rubric)


def context_texts(store: Any, payloads: Sequence[str | None]) -> dict[str, str]:
    """key -> text of the context texts that ``payloads`` (stored output JSON) name by key, read in bulk (no
    statement when none does: inline contexts, as other backends store them)."""
    from ..context_keys import keys_of

    keys = sorted({key for raw in payloads for key in keys_of(raw)})
    if not keys:
        return {}
    if not hasattr(store, "context_texts"):
        raise StoreError(f"{type(store).__name__} stores outputs with context keys but has no context_texts()")
    return store.context_texts(keys)


def _info(row: dict[str, Any], holder: Any, systems: int, outputs: int) -> RunInfo:
    run_id = row["id"]
    if holder is not None:
        state, detail = _STATE_RUNNING, f"pid {holder.pid} on {holder.host}"
    elif row["status"] == "complete" and outputs >= systems * row["sample_count"]:
        state, detail = _STATE_COMPLETE, ""
    elif row["status"] == BUDGET_LIMITED:
        state, detail = BUDGET_LIMITED, "re-run with a larger budget to resume"
    elif row["status"] == SETTLED:
        state, detail = STOPPED_EARLY, stopped_detail(_json(row["spec_json"], run_id, "spec"))
    elif row["status"] == FAILED:
        state, detail = FAILED, FAILED_DETAIL
    else:
        state, detail = _STATE_INTERRUPTED, "run again to resume"
    return RunInfo(
        id=run_id,
        fingerprint=row["fingerprint"],
        project=row["project"],
        config_path=row["config_path"],
        description=row.get("description") or "",
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        status=row["status"],
        state=state,
        state_detail=detail,
        ragassay_version=row["ragassay_version"],
        sample_count=row["sample_count"],
        config=_json(row["config_json"], run_id, "config"),
        spec=_json(row["spec_json"], run_id, "spec"),
        warnings=_json(row.get("warnings_json") or "[]", run_id, "warnings"),
    )


def _json(raw: str, run_id: str, what: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise StoreError(
            f"run {run_id[:12]}: its stored {what} is not valid JSON ({exc}); the file is damaged"
        ) from None


def _output(r: tuple, payloads: bool) -> OutputRecord:
    system, qid, status, error, latency, *usage = r[:12]
    retrieved, count, reused = r[12:15]
    return OutputRecord(
        sys.intern(system),
        sys.intern(qid),
        sys.intern(status),
        error,
        latency,
        Usage.of(tuple(usage)),
        None if retrieved is None else bool(retrieved),
        count,
        reused,
        r[15] if payloads else None,
    )


def pick_baseline(store: Any, fingerprint: str, project: str, ref: str | None) -> dict[str, Any]:
    """The gate's baseline run in ``store``: ``ref`` (id or unique prefix) when given, else the newest run with the
    candidate's config fingerprint, else the newest run of the candidate's project name."""
    from ..errors import ConfigError

    if ref:
        return store.get_run(ref)
    same = store.find_run(fingerprint)
    if same is not None:
        return store.get_run(same["id"])
    runs = store.list_runs()
    for run in runs:  # newest first
        if run["project"] == project:
            return store.get_run(run["id"])
    known = ", ".join(f"{r['id'][:12]} ({r['project']})" for r in runs[:10]) or "none"
    raise ConfigError(
        f"the baseline database has no run of project '{project}' (runs: {known}). "
        f"Name one with --baseline PATH#RUN, or run the project on the main branch first."
    )
