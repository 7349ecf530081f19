"""Each evaluation the watch makes goes out as an OpenTelemetry ``gen_ai.evaluation.result`` event once it is
committed (:mod:`ragassay.traces.evaluations`: the same attributes and the same evaluated span as
``ragassay traces export-evals``). The events are made as each trace is scored and sent after the commit."""

from __future__ import annotations

import time
import types
from collections.abc import Sequence
from typing import Any

from ..traces.evaluations import EvaluationEvent, Evaluations, evaluation_attributes, send


def _scores(result: Any) -> list[Any]:
    """Score-like records (what :func:`evaluation_attributes` reads) of one unit result's values."""
    found = [
        types.SimpleNamespace(
            kind="metric",
            label=m.metric,
            value=m.value,
            verdict=None,
            explanation=None,
            unscored_reason=m.unscored_reason,
            judge_id=None,
            details=m.details,
        )
        for m in result.metrics
        if m.repeat == 0
    ]
    found += [
        types.SimpleNamespace(
            kind="judge",
            label=j.judge,
            value=j.score,
            verdict=j.verdict,
            explanation=j.explanation,
            unscored_reason=j.explanation if j.score is None else None,
            judge_id=j.judge_id,
            details=j.details,
        )
        for j in result.judgements
        if j.repeat == 0
    ]
    return found


def evaluation_events(run_id: str, spec: dict, results: Sequence[Any]) -> list[EvaluationEvent]:
    """The events of ``results`` (unit results of trace samples), parented to each trace's answer span."""
    from .. import __version__

    events = []
    for result in results:
        trace = (result.output.trace if result.output is not None else None) or {}
        trace_id, span_id = trace.get("trace_id"), trace.get("answer_span_id") or trace.get("span_id")
        if not trace_id or not span_id:
            continue
        base = {"ragassay.version": __version__, "ragassay.run.id": run_id, "ragassay.system": result.system}
        for score in _scores(result):
            events.append(EvaluationEvent(trace_id, span_id, {**base, **evaluation_attributes(spec, score)}))
    return events


def send_events(run_id: str, events: Sequence[EvaluationEvent], endpoint: str, headers: dict) -> int:
    """Send ``events`` (:func:`evaluation_events` of committed results); the number sent (a refusal raises, the
    caller says it)."""
    found = Evaluations(run_id, time.time_ns(), list(events), [])
    return send(found, endpoint, headers=headers or None) if found.events else 0
