"""A watch session over traces already in the store (``--from-store``): each complete trace is scored once into the
watch run with its progress, a degradation after a version change raises one alarm naming the version, the metric
and the worst traces' serve paths, and a second session resumes without scoring anything again."""

from __future__ import annotations

import json

import pytest

from ragassay.cli.watch_cmd import load_statistics as statistics
from ragassay.watch import StopRule, watch

from watch_streams import BAD, DEGRADED, GOOD, project, rows, store_traces, traces_file

pytest.importorskip("opentelemetry.proto")

WATCH = """reference = { target = { answer_relevance_token_recall = 0.9 } }
sinks = { jsonl = "alarms.jsonl" }
"""


def _import(tmp_path, watched, numbers, version: str, answer: str) -> None:
    store_traces(watched, traces_file(tmp_path / f"v{version}.jsonl", numbers, version, answer))


@pytest.mark.timeout(300)
def test_a_degradation_after_a_version_change_raises_one_alarm_and_a_resume_scores_nothing_twice(tmp_path):
    watched = project(tmp_path, WATCH)
    lines: list[str] = []
    first = watch(watched, statistics(), stop=StopRule(seconds=0), say=lines.append)  # creates the watch run
    assert first.count == 0 and not first.resumed
    _import(tmp_path, watched, range(1, 11), "1", GOOD)
    before = watch(watched, statistics(), stop=StopRule(traces=10), say=lines.append)
    assert before.decided == {"scored": 10} and before.alarms == []
    # enough degraded traces for the detector's evidence to pass 1/alpha (docs/watch.md: the price of its start
    # weights, about log 2000, comes before a change this early can alarm)
    _import(tmp_path, watched, range(11, 11 + DEGRADED), "2", BAD)
    after = watch(watched, statistics(), stop=StopRule(traces=DEGRADED), say=lines.append)
    assert after.resumed and after.decided == {"scored": DEGRADED}
    assert len(after.alarms) == 1
    alarm = after.alarms[0]
    assert alarm["metric"] == "answer_relevance_token_recall" and alarm["change"] < 0
    assert list(alarm["versions"]["service.version"])[0] == "2"
    assert alarm["links"] and all(link.startswith(f"/runs/{after.run_id}/samples/") for link in alarm["links"])
    assert "service.version: 2" in alarm["text"] and alarm["text"] in lines
    written = [json.loads(line) for line in (tmp_path / "alarms.jsonl").read_text().splitlines()]
    assert [w["text"] for w in written] == [alarm["text"]]
    outputs = rows(tmp_path, f"SELECT question_id FROM outputs WHERE run_id = '{after.run_id}'")
    assert len(outputs) == len(set(outputs)) == 10 + DEGRADED
    values = rows(tmp_path, "SELECT count(*) FROM metric_values")
    assert values == [(10 + DEGRADED,)]
    samples = rows(tmp_path, f"SELECT count(*) FROM run_samples WHERE run_id = '{after.run_id}'")
    assert samples == [(10 + DEGRADED,)]
