"""Runs written straight into a results store, each value chosen by the test: what an analysis or a page of a
stored run is given, without running a system (the store is real; only the values are planted).

``write_run(path, {"a": [cell, ...], "b": [...]})`` writes one run whose systems answer the same samples; a cell
is a dict with any of ``answer`` (its text; default "SYSTEM says QUESTION_ID"), ``metrics`` ({label: value or
None}), ``judges`` ({label: True, False or None}), ``latency`` (seconds), ``status`` ("ok" or "failed"), ``usage`` ((input tokens, output tokens, "backend/model"): one model
call, priced by the built-in prices; a "local/..." model is free, an unknown one leaves the cost unknown).
"""

from __future__ import annotations

import json
from pathlib import Path

from ragassay.models import Judgement, MetricValue, RAGOutput, Sample, TokenUsage
from ragassay.store import open_store, store_url
from ragassay.store.units import UnitResult

RUN_ID = "written-run-0001"


def write_run(
    path: Path,
    systems: dict[str, list[dict]],
    *,
    traits: dict[str, dict] | None = None,
    config: dict | None = None,
    metadata: list[dict] | None = None,
    run_id: str = RUN_ID,
):
    """Write the run and return (store, run id). ``traits``: per metric label, its stored traits (direction,
    value_range; default higher is better in [0, 1]); ``config``: the stored config (``[evaluation] decide``,
    ``[analysis] breakdowns``); ``metadata``: per sample, its metadata."""
    cells = next(iter(systems.values()))
    count = len(cells)
    labels = list(dict.fromkeys(m for row in systems.values() for c in row for m in c.get("metrics", {})))
    judges = list(dict.fromkeys(j for row in systems.values() for c in row for j in c.get("judges", {})))
    traits = traits or {}
    spec = {
        "metrics": {m: {"traits": traits.get(m, {"direction": "higher", "value_range": [0.0, 1.0]})} for m in labels},
        "judges": {j: {} for j in judges},
    }
    samples = [
        Sample(
            question_id=f"q{i:03d}",
            question=f"Question {i}?",
            reference_answers=[f"answer {i}"],
            metadata=(metadata[i] if metadata else {}),
        )
        for i in range(count)
    ]
    store = open_store(store_url(str(path), path.parent))
    store.create_run(
        {
            "id": run_id,
            "fingerprint": run_id,
            "project": "written",
            "config_path": "x",
            "config_json": json.dumps(config or {}),
            "spec_json": json.dumps(spec),
            "ragassay_version": "0",
            "sample_count": count,
        },
        [(name, "{}") for name in systems],
        samples,
    )
    results = [_unit(name, sample, cell) for name, row in systems.items() for sample, cell in zip(samples, row)]
    store.write_units(run_id, results)
    store.finish_run(run_id, "complete", [])
    return store, run_id


def _unit(system: str, sample: Sample, cell: dict) -> UnitResult:
    if cell.get("status", "ok") == "failed":
        return UnitResult(system, sample.question_id, "failed", None, error="planted failure")
    output = RAGOutput(
        answer=cell.get("answer", f"{system} says {sample.question_id}"),
        contexts=[],
        latency_s=cell.get("latency"),
        usage=_usage(cell.get("usage")),
    )
    metrics = [
        MetricValue(metric=m, value=v) if v is not None else MetricValue(metric=m, value=None, unscored_reason="none")
        for m, v in cell.get("metrics", {}).items()
    ]
    judgements = [
        Judgement(judge=j, verdict="correct" if v else "incorrect", score=1.0 if v else 0.0, explanation="planted")
        if v is not None
        else Judgement(judge=j, verdict="unscored", score=None, explanation="no verdict")
        for j, v in cell.get("judges", {}).items()
    ]
    return UnitResult(system, sample.question_id, "ok", output, metrics=metrics, judgements=judgements)


def _usage(planted: tuple[int, int, str] | None) -> TokenUsage:
    if planted is None:
        return TokenUsage()
    tokens_in, tokens_out, model = planted
    call = TokenUsage(input_tokens=tokens_in, output_tokens=tokens_out, calls=1)
    return TokenUsage(input_tokens=tokens_in, output_tokens=tokens_out, calls=1, by_model={model: call})


def empty_run(store, run_id: str, systems=("sys",), questions=("a",)) -> None:
    """Create run ``run_id`` in ``store`` with ``systems`` (empty specs) and a sample per question id, and nothing
    answered yet: what a store test writes its unit results into."""
    store.create_run(
        {
            "id": run_id,
            "fingerprint": "f" + run_id,
            "project": "p",
            "config_path": "x",
            "config_json": "{}",
            "spec_json": "{}",
            "ragassay_version": "0",
            "sample_count": len(questions),
        },
        [(system, "{}") for system in systems],
        [Sample(question_id=q, question=f"question {q}?") for q in questions],
    )
