"""Bringing a Unitxt RAG file in as a project, and taking a stored run out in Unitxt's layout with its scores.

``ragassay unitxt import FILE --into DIR`` writes DIR/ragassay.toml: the file is both the dataset (``unitxt``
source: questions and references) and a system (``precomputed``: its answers and contexts replayed), evaluated
with the Unitxt metrics in compatibility mode. ``ragassay run DIR`` then scores it like any other system; add
systems beside it to compare. ``ragassay unitxt export RUN`` writes one Unitxt record per (system, question) with
``score.instance`` holding every stored metric value (None = unscored, reason in ``score.unscored``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .records import read_unitxt, sample_to_record

DATA_FILE = "unitxt.jsonl"
IMPORTED_METRICS = (
    "token_recall",
    "k_precision",
    "answer_relevance_token_recall",
    "context_relevance_token_precision",
    "context_mrr",
    "context_map",
)


def import_project(source: Path, folder: Path, *, name: str | None = None) -> Path:
    """Write a project in ``folder`` that evaluates the Unitxt file ``source``; returns the config path.

    The file is checked first (a malformed line is a DatasetError naming it) and copied to ``folder``; an existing
    config there is never overwritten.
    """
    records = read_unitxt(source)
    config = folder / "ragassay.toml"
    if config.exists():
        raise ConfigError(f"{config} already exists; import into an empty folder (--into NEW_FOLDER).")
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, folder / DATA_FILE)
    predictions = sum(r.has_prediction for r in records)
    config.write_text(project_toml(name or folder.resolve().name, source.name, len(records), predictions), "utf-8")
    return config


def project_toml(name: str, original: str, records: int, predictions: int) -> str:
    """The imported project's config (a Unitxt dataset replayed as one system, Unitxt metrics)."""
    metrics = ", ".join(f'"{m}"' for m in IMPORTED_METRICS)
    return f"""# Imported by `ragassay unitxt import` from {json.dumps(original)}:
# {records} questions, {predictions} with predictions. Run it with: ragassay run --config <this folder>

[project]
name = {json.dumps(name)}
results = "ragassay-results.db"

[dataset]
source = "unitxt"
options = {{ path = "{DATA_FILE}" }}

[systems.predictions]
description = "The answers and contexts in {DATA_FILE}, replayed"
rag = {{ name = "precomputed", options = {{ path = "{DATA_FILE}" }} }}

[evaluation]
# 'unitxt': every metric reproduces Unitxt 1.26's value (0 where ragassay's own mode says "unscored").
compat = "unitxt"
metrics = [{metrics}]
"""


def export_records(run: Any, systems: list[str] | None = None) -> list[dict[str, Any]]:
    """Unitxt records of a stored run's ok outputs, each with ``system`` and ``score`` (instance values). ``run``:
    the run read with its payloads (:func:`ragassay.results.read_run` with ``payloads=True``)."""
    samples = dict(zip(run.question_ids, run.samples))
    values: dict[tuple[str, str], dict[str, Any]] = {}
    reasons: dict[tuple[str, str], dict[str, str]] = {}
    for score in run.records(kind="metric", repeat=0):
        key = (score.system, score.question_id)
        values.setdefault(key, {})[score.label] = score.value
        if score.value is None:
            reasons.setdefault(key, {})[score.label] = score.unscored_reason
    records = []
    for (system, question_id), stored in sorted(run.outputs.items()):
        if not stored.ok or stored.payload is None or (systems and system not in systems):
            continue
        output = run.payload(system, question_id)
        record = sample_to_record(samples[question_id], output.answer, output.contexts, output.context_ids)
        score: dict[str, Any] = {"instance": dict(sorted(values.get((system, question_id), {}).items()))}
        if (system, question_id) in reasons:
            score["unscored"] = reasons[(system, question_id)]
        records.append({**record, "system": system, "score": score})
    return records
