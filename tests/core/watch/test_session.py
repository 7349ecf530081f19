"""A watch session over traces already in the store (``--from-store``): each complete trace is scored once into the
watch run with its progress, a degradation after a version change raises one alarm naming the version, the metric
and the worst traces' serve paths, and a second session resumes without scoring anything again."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ragassay.cli.watch_cmd import load_statistics as statistics
from ragassay.engine.project import Project
from ragassay.traces.ingest import import_paths
from ragassay.watch import StopRule, watch

from otlp_traces import openinference_trace, request

pytest.importorskip("opentelemetry.proto")

QUESTION = "Which river flows through the old town of Prague"
GOOD = "The river Vltava flows through the old town of Prague."
BAD = "I cannot say."
DEGRADED = 40
CONFIG = """
[project]
name = "watched"

[watch]
metrics = ["answer_relevance_token_recall"]
quiet_s = 0
poll_s = 0.05
batch = 4
reference = {{ target = {{ answer_relevance_token_recall = 0.9 }} }}
sinks = {{ jsonl = "alarms.jsonl" }}
"""


def _project(tmp_path):
    (tmp_path / "ragassay.toml").write_text(CONFIG.format(), encoding="utf-8")
    return Project.load(tmp_path)


def _import(tmp_path, project, traces: list[tuple[int, str, str]], name: str) -> None:
    lines = [
        json.dumps(request(openinference_trace(n, QUESTION, answer), version=version)) for n, version, answer in traces
    ]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = project.open_store()
    try:
        import_paths(store, [path])
    finally:
        store.close()


def _rows(tmp_path, query: str) -> list[tuple]:
    with sqlite3.connect(tmp_path / "ragassay-results.db") as db:
        return db.execute(query).fetchall()


@pytest.mark.timeout(300)
def test_a_degradation_after_a_version_change_raises_one_alarm_and_a_resume_scores_nothing_twice(tmp_path):
    project = _project(tmp_path)
    lines: list[str] = []
    first = watch(project, statistics(), stop=StopRule(seconds=0), say=lines.append)  # creates the watch run
    assert first.count == 0 and not first.resumed
    _import(tmp_path, project, [(n, "1", GOOD) for n in range(1, 11)], "v1")
    before = watch(project, statistics(), stop=StopRule(traces=10), say=lines.append)
    assert before.decided == {"scored": 10} and before.alarms == []
    # enough degraded traces for the detector's evidence to pass 1/alpha (docs/watch.md: the price of its start
    # weights, about log 2000, comes before a change this early can alarm)
    _import(tmp_path, project, [(n, "2", BAD) for n in range(11, 11 + DEGRADED)], "v2")
    after = watch(project, statistics(), stop=StopRule(traces=DEGRADED), say=lines.append)
    assert after.resumed and after.decided == {"scored": DEGRADED}
    assert len(after.alarms) == 1
    alarm = after.alarms[0]
    assert alarm["metric"] == "answer_relevance_token_recall" and alarm["change"] < 0
    assert list(alarm["versions"]["service.version"])[0] == "2"
    assert alarm["links"] and all(link.startswith(f"/runs/{after.run_id}/samples/") for link in alarm["links"])
    assert "service.version: 2" in alarm["text"] and alarm["text"] in lines
    written = [json.loads(line) for line in (tmp_path / "alarms.jsonl").read_text().splitlines()]
    assert [w["text"] for w in written] == [alarm["text"]]
    outputs = _rows(tmp_path, f"SELECT question_id FROM outputs WHERE run_id = '{after.run_id}'")
    assert len(outputs) == len(set(outputs)) == 10 + DEGRADED
    values = _rows(tmp_path, "SELECT count(*) FROM metric_values")
    assert values == [(10 + DEGRADED,)]
    samples = _rows(tmp_path, f"SELECT count(*) FROM run_samples WHERE run_id = '{after.run_id}'")
    assert samples == [(10 + DEGRADED,)]
