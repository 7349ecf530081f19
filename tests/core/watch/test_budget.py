"""The judge budget per hour holds exactly at a loopback judge (its calls counted by the server) while traces arrive
faster than the budget allows: the first traces get the calls, the others are stored with the model-calling value
unscored for budget (the lexical metric still scored), counted and reported, never dropped."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ragassay.cli.watch_cmd import load_statistics as statistics
from ragassay.engine.project import Project
from ragassay.traces.ingest import import_paths
from ragassay.watch import StopRule, watch

from otlp_traces import openinference_trace, request
from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

TRACES, CALLS_PER_HOUR = 9, 4
CONFIG = """
[project]
name = "budgeted"

[watch]
metrics = ["answer_relevance_token_recall", {{ name = "answer_relevancy", options = {{ generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1" }} }} }} }}]
quiet_s = 0
poll_s = 0.05
batch = 5
budget = {{ calls_per_hour = {calls} }}
reference = {{ target = {{ answer_relevance_token_recall = 0.5, answer_relevancy = 0.5 }} }}
"""


def _relevant(request):
    return Turn(text=json.dumps({"feedback": "On topic.", "subject_matter": 1, "focus": 1}), usage=(50, 10, 0))


@pytest.mark.timeout(300)
def test_the_hourly_budget_holds_exactly_and_the_rest_is_unscored_for_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-watch-budget")
    with OpenAIChatServer() as server:
        server.default = _relevant
        (tmp_path / "ragassay.toml").write_text(CONFIG.format(url=server.url, calls=CALLS_PER_HOUR), encoding="utf-8")
        project = Project.load(tmp_path)
        watch(project, statistics(), stop=StopRule(seconds=0), say=lambda line: None)  # the watch run starts
        lines = [
            json.dumps(request(openinference_trace(n, f"Question {n} about rivers?", f"Rivers {n}.")))
            for n in range(1, TRACES + 1)
        ]
        (tmp_path / "burst.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        store = project.open_store()
        import_paths(store, [tmp_path / "burst.jsonl"])  # all at once: far faster than 4 calls per hour
        store.close()
        report = watch(project, statistics(), stop=StopRule(traces=TRACES), say=lambda line: None)
        calls = server.calls
    assert calls == CALLS_PER_HOUR
    assert report.decided == {"scored": CALLS_PER_HOUR, "unscored": TRACES - CALLS_PER_HOUR}
    assert report.budget["last_hour"]["calls"] == CALLS_PER_HOUR and report.budget["limits"] == {"calls_per_hour": 4}
    with sqlite3.connect(tmp_path / "ragassay-results.db") as db:
        rows = db.execute("SELECT metric, value IS NULL, unscored_reason FROM metric_values").fetchall()
        reasons = db.execute("SELECT reason FROM watch_traces WHERE status = 'unscored'").fetchall()
    relevancy = [row for row in rows if row[0] == "answer_relevancy"]
    lexical = [row for row in rows if row[0] == "answer_relevance_token_recall"]
    assert len(relevancy) == len(lexical) == TRACES  # every trace stored, none dropped
    assert sum(1 for _, unscored, _ in relevancy if not unscored) == CALLS_PER_HOUR
    assert all(reason.startswith("unscored: budget") for _, unscored, reason in relevancy if unscored)
    assert not any(unscored for _, unscored, _ in lexical)  # a metric without model calls is still scored
    assert reasons == [("budget",)] * (TRACES - CALLS_PER_HOUR)
