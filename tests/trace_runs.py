"""A stored run scored from traces, as the ``traces`` source and ``trace_replay`` rag store it (the contract of
docs/traces.md): each sample carries ``metadata["trace"]`` (trace id, root and answer span ids, start), each
output the same ids in its trace. Built from JSONL through the ``files`` source and the ``precomputed`` rag, so
the trend, export-evals and testset tests run without the import path."""

from __future__ import annotations

import json
import textwrap

import ragassay
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.results import read_run

DAY_NS = 86_400 * 1_000_000_000
START_NS = 1_741_046_400 * 1_000_000_000  # 2025-03-04 00:00 UTC, a Tuesday
PER_DAY = 12
DAYS = 3


def trace_id(i: int) -> str:
    return f"{i + 1:032x}"


def root_span(i: int) -> str:
    return f"{0xA000 + i:016x}"


def answer_span(i: int) -> str:
    return f"{0xB000 + i:016x}"


def answer_of(day: int, k: int) -> str:
    """Days 0 and 1 answer every question right; day 2 misses 9 of 12 (a drift)."""
    return "paris" if day < 2 or k % 4 == 0 else "lyon"


def rows(duplicates: bool = False):
    """(samples, outputs) of DAYS x PER_DAY traces; with ``duplicates``, questions repeat across days."""
    samples, outputs = [], []
    for day in range(DAYS):
        for k in range(PER_DAY):
            i = day * PER_DAY + k
            question = f"What is the capital of country {k if duplicates else i}?"
            if duplicates and day == 1:
                question = "  " + question.upper().replace("?", " ?") + " "  # same question once normalised
            ids = {"trace_id": trace_id(i), "span_id": root_span(i), "answer_span_id": answer_span(i)}
            trace = {
                **ids,
                "start_ns": START_NS + day * DAY_NS + k * 3_600 * 1_000_000_000,
                "service_name": "rag-app",
                "service_version": "1.0",
                "session_id": f"s{k % 3}",
            }
            samples.append(
                {
                    "question_id": trace_id(i),
                    "question": question,
                    "reference_answers": ["paris"],
                    "metadata": {"trace": trace},
                }
            )
            outputs.append({"question_id": trace_id(i), "answer": answer_of(day, k), "trace": ids})
    return samples, outputs


CONFIG = """
[dataset]
options = { path = "qa.jsonl" }
[systems.app]
rag = { name = "precomputed", options = { path = "outputs.jsonl" } }
[evaluation]
metrics = %s
judges = [{ name = "match", options = { mode = "exact" } }]
"""


def make_run(folder, *, duplicates: bool = False, untimed: int = 0, metrics=("exact_match", "token_f1"), broken=()):
    """Write and run the project in ``folder``; returns the run id. ``untimed`` samples lose their trace start;
    the samples at the indexes ``broken`` get a malformed trace id (output and metadata)."""
    samples, outputs = rows(duplicates)
    for sample in samples[:untimed]:
        del sample["metadata"]["trace"]["start_ns"]
    for index in broken:
        samples[index]["metadata"]["trace"]["trace_id"] = outputs[index]["trace"]["trace_id"] = "not-hex"
    (folder / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in samples))
    (folder / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in outputs))
    (folder / "ragassay.toml").write_text(textwrap.dedent(CONFIG) % json.dumps(list(metrics)))
    return ragassay.run(folder).run_id


def read(folder, run_id, payloads=False):
    store = Project(load_config(folder)).open_store()
    try:
        return read_run(store, run_id, payloads=payloads)
    finally:
        store.close()
