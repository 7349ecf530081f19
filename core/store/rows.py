"""Table rows from result models: what :meth:`ResultsStore.write_units` inserts for outputs, metric values and
judgements (with their evaluation-cost columns), and a unit result settled into those rows before its batch is
written (:func:`settled`)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import orjson

from ..models import Judgement, MetricValue, TokenUsage
from .contexts import pack
from .migrations import output_columns


def output_row(run_id: str, r: Any, now: float, prices: Any, texts: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``outputs`` row of a fresh :class:`~ragassay.store.units.UnitResult`.

    ``texts``: with a dict, the output's contexts are stored by key (:func:`ragassay.store.contexts.pack`) and
    their texts added to it for the caller to store in ``context_texts``; without, inline (other backends)."""
    if r.rows is not None:  # settled: the row made then, with this write's run and time
        texts.update(r.rows.texts)  # type: ignore[union-attr]  # settled only by stores that pass texts
        return {**r.rows.output, "run_id": run_id, "created_at": now}
    out = r.output
    if out is None:
        raw = None
    else:
        raw = out.model_dump_json() if texts is None else pack(out, texts)
    return {
        "run_id": run_id,
        "system": r.system,
        "question_id": r.question_id,
        "status": r.status,
        "error": r.error,
        "answer": out.answer if out else None,
        "output_json": raw,
        "latency_s": out.latency_s if out else None,
        "input_tokens": out.usage.input_tokens if out else 0,
        "output_tokens": out.usage.output_tokens if out else 0,
        "reasoning_tokens": out.usage.reasoning_tokens if out else 0,
        "created_at": now,
        "system_key": r.system_key,
        "sample_key": r.sample_key,
        "reused_from": r.reused_from,
        **output_columns(out, prices),
    }


_NO_USAGE: dict[str, Any] = {}  # no model call: the usage columns keep their defaults (0, NULL)
_DETAILS_JSON = json.JSONEncoder(sort_keys=True)  # what orjson does not take (details_text)


def details_text(details: dict[str, Any]) -> str:
    """``details`` as stored in ``details_json``: standard JSON with sorted keys, written by orjson (about five
    times as fast as the standard library's encoder on the trajectory metrics' details). What orjson does not
    take (keys that are not strings, integers beyond 64 bits, numpy numbers) is written by the standard
    library's encoder, with sorted keys too. A non-finite float (NaN, infinity) is stored as ``null``: JSON has
    no such number (SQLite's and PostgreSQL's JSON functions refuse it)."""
    try:
        return orjson.dumps(details, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return _DETAILS_JSON.encode(details)


def by_columns(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Rows grouped by their set of columns (one executemany each)."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row), []).append(row)
    return list(groups.values())


def usage_row(usage: TokenUsage | None, prices: Any) -> dict[str, Any]:
    """Evaluation-cost columns of one metric value or judgement."""
    if usage is None:
        return _NO_USAGE
    unpriced = prices.unpriced(usage)
    if not usage.by_model and (usage.input_tokens or usage.output_tokens):
        unpriced = ["(tokens reported without a model)"]
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "calls": usage.calls,
        "cached_tokens": usage.cached_tokens,
        "cache_hits": usage.cache_hits,
        "cost_usd": None if unpriced else prices.cost(usage),
        "unpriced": ", ".join(unpriced) or None,
    }


def metric_row(output_id: int | None, m: MetricValue, context: Any) -> dict[str, Any]:
    """The ``metric_values`` row of one value (``context``: a :class:`WriteContext`)."""
    return {
        "output_id": output_id,
        "metric": m.metric,
        "repeat": m.repeat,
        "value": m.value,
        "unscored_reason": m.unscored_reason,
        "details_json": details_text(m.details) if m.details else None,
        "metric_key": context.metric_keys.get(m.metric),
        **usage_row(m.usage, context.prices),
    }


def judgement_row(output_id: int | None, j: Judgement, context: Any) -> dict[str, Any]:
    """The ``judgements`` row of one judgement (``context``: a :class:`WriteContext`)."""
    return {
        "output_id": output_id,
        "judge": j.judge,
        "repeat": j.repeat,
        "verdict": j.verdict,
        "score": j.score,
        "explanation": j.explanation,
        "judge_id": j.judge_id,
        "details_json": details_text(j.details) if j.details else None,
        "judge_key": context.judge_keys.get(j.judge),
        **usage_row(j.usage, context.prices),
    }


@dataclasses.dataclass
class UnitRows:
    """A unit result as rows (:func:`settled`): the ``outputs`` row of a fresh output (its run id and time set when
    written) with the context texts it refers to, and its ``metric_values`` and ``judgements`` rows (their output
    id set when written)."""

    output: dict[str, Any] | None
    texts: dict[str, str]
    metrics: list[dict[str, Any]]
    judgements: list[dict[str, Any]]


def settled(result: Any, context: Any) -> Any:
    """``result`` (a :class:`~ragassay.store.units.UnitResult`) with its output and values replaced by the rows
    :func:`~ragassay.store.writes.write_batch` writes for them, made now by the same functions: what a run keeps
    until the batch is written, so that the output (its trajectory) and the values (their details) are not kept
    alive as objects meanwhile. Writing it stores the same rows as writing ``result``."""
    texts: dict[str, str] = {}
    output = output_row("", result, 0.0, context.prices, texts) if result.output_id is None else None
    rows = UnitRows(
        output,
        texts,
        [metric_row(None, m, context) for m in result.metrics],
        [judgement_row(None, j, context) for j in result.judgements],
    )
    return dataclasses.replace(result, output=None, metrics=[], judgements=[], rows=rows)


def value_rows(output_id: int | None, result: Any, context: Any) -> tuple[list[dict], list[dict]]:
    """The ``metric_values`` and ``judgements`` rows of ``result`` for output ``output_id``."""
    if result.rows is not None:
        return (
            [{**row, "output_id": output_id} for row in result.rows.metrics],
            [{**row, "output_id": output_id} for row in result.rows.judgements],
        )
    return (
        [metric_row(output_id, m, context) for m in result.metrics],
        [judgement_row(output_id, j, context) for j in result.judgements],
    )


def value_pairs(result: Any) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """The (metric, repeat) and (judge, repeat) pairs ``result`` writes, sorted."""
    if result.rows is not None:
        metrics = {(row["metric"], row["repeat"]) for row in result.rows.metrics}
        return sorted(metrics), sorted({(row["judge"], row["repeat"]) for row in result.rows.judgements})
    return sorted({(v.metric, v.repeat) for v in result.metrics}), sorted(
        {(v.judge, v.repeat) for v in result.judgements}
    )
