"""Streams of traces for watch tests: a project with a ``[watch]`` section, OTLP JSON files of OpenInference
traces with a good or a bad answer (and a service.version), imported into the project's store or written into a
folder; and :func:`rows` to read the results store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ragassay.engine.project import Project
from ragassay.traces.ingest import import_paths

from otlp_traces import openinference_trace, request

QUESTION = "Which river flows through the old town of Prague"
GOOD = "The river Vltava flows through the old town of Prague."
BAD = "I cannot say."
METRIC = "answer_relevance_token_recall"
#: degraded traces enough for the detector's evidence to pass 1/alpha after 10 good ones (tests/core/watch)
DEGRADED = 40
HEAD = """
[project]
name = "watched"

[watch]
metrics = ["answer_relevance_token_recall"]
quiet_s = 0
poll_s = 0.05
batch = 4
"""


def project(folder: Path, watch: str) -> Project:
    """A project whose ``[watch]`` is :data:`HEAD` plus ``watch`` (more keys of the section)."""
    (folder / "ragassay.toml").write_text(HEAD + watch, encoding="utf-8")
    return Project.load(folder)


def traces_file(path: Path, numbers, version: str, answer: str, start_ms: int = 0) -> Path:
    """One OTLP JSON line per trace number, its root starting ``start_ms`` after 2025-01-01T12:00Z."""
    lines = [
        json.dumps(request(openinference_trace(n, QUESTION, answer, start=start_ms), version=version)) for n in numbers
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def store_traces(project: Project, path: Path) -> None:
    """Import ``path`` into the project's results store."""
    store = project.open_store()
    try:
        import_paths(store, [path])
    finally:
        store.close()


def rows(folder: Path, query: str) -> list[tuple]:
    with sqlite3.connect(folder / "ragassay-results.db", timeout=30) as db:
        return db.execute(query).fetchall()
