"""Test sets from traffic: the questions of a run scored from traces as a regression test set (JSONL).

One record per distinct question, in the run's sample order. Questions are the same when their SQuAD
normalisations are (:func:`ragassay.text.normalize_answer`: case, punctuation, articles and whitespace ignored);
the first phrasing seen is kept. The answers the systems gave (ok outputs, non-empty, distinct once normalised)
become the record's ``reference_answers``, **unverified**: ``metadata.references`` says so and
``metadata.source`` names the traces, so a reviewer confirms or corrects them before the set decides anything.

Each line is a sample the ``files`` dataset source reads as it is (``question_id``, ``question``,
``reference_answers``, ``metadata``): ``[dataset] options = { path = "qa.jsonl" }``. The question id is
``t-`` and 16 hex digits of the sha256 of the normalised question, so the same question has the same id in every
set built from any run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

UNVERIFIED = "unverified: answers observed in production traces, not checked; review before relying on them"


@dataclasses.dataclass(frozen=True)
class TestSet:
    """The records, and what was left out (with the reason)."""

    __test__ = False  # not a pytest class

    run_id: str
    records: list[dict[str, Any]]
    samples: int  # samples of the run read
    duplicates: int  # samples folded into an earlier record (same normalised question)
    without_answer: int  # records with no candidate answer (every output failed, missing or empty)


def testset(run, *, systems: list[str] | None = None) -> TestSet:
    """The regression test set of ``run`` (:class:`ragassay.results.RunData` read with payloads): answers of
    ``systems`` (default: every system of the run)."""
    from ..errors import ConfigError
    from ..text import normalize_answer

    if not run.has_payloads:
        raise ValueError("testset() needs the outputs: read_run(store, run, payloads=True)")
    chosen = list(systems or run.systems)
    unknown = [s for s in chosen if s not in run.systems]
    if unknown:
        raise ConfigError(
            f"--system {', '.join(unknown)} is not a system of the run; its systems: {', '.join(run.systems)}"
        )
    records: dict[str, dict[str, Any]] = {}
    answers: dict[str, dict[str, str]] = {}  # key -> normalised answer -> first phrasing
    duplicates = 0
    for sample in run.samples:
        key = normalize_answer(sample.question)
        if key in records:
            duplicates += 1
        else:
            records[key], answers[key] = _record(sample, key, run.id), {}
        trace = sample.metadata.get("trace") or {}
        if trace.get("trace_id"):
            records[key]["metadata"]["trace_ids"].append(trace["trace_id"])
        for system in chosen:
            output = run.payload(system, sample.question_id)
            if output is not None and run.status(system, sample.question_id) == "ok" and output.answer.strip():
                answers[key].setdefault(normalize_answer(output.answer) or output.answer.strip(), output.answer.strip())
    for key, record in records.items():
        record["reference_answers"] = list(answers[key].values())
    without = sum(1 for r in records.values() if not r["reference_answers"])
    return TestSet(run.id, list(records.values()), len(run.samples), duplicates, without)


def _record(sample, key: str, run_id: str) -> dict[str, Any]:
    trace = sample.metadata.get("trace") or {}
    metadata = {"references": UNVERIFIED, "source": f"traces of run {run_id}", "trace_ids": []}
    if trace.get("service_version"):
        metadata["service_version"] = trace["service_version"]
    if trace.get("start_ns") is not None:
        metadata["first_seen_ns"] = trace["start_ns"]
    return {
        "question_id": "t-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16],
        "question": sample.question.strip(),
        "reference_answers": [],
        "metadata": metadata,
    }


def write_jsonl(found: TestSet, path: Path) -> None:
    """One record per line (UTF-8)."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in found.records), encoding="utf-8")
