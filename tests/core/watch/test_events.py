"""The watch's OTLP output at a loopback OTLP/HTTP logs receiver: each committed evaluation as a
``gen_ai.evaluation.result`` event on its trace's answer span, and the alarm as a ``ragassay.watch.alarm`` event
(the official exporter; parsed with the official proto package); a receiver that refuses is said once and counted,
and the watch goes on."""

from __future__ import annotations

import json

import pytest

from ragassay.cli.watch_cmd import load_statistics
from ragassay.watch import StopRule, watch

from servers.otlp_logs import OTLPLogsReceiver, attributes
from watch_streams import BAD, DEGRADED, GOOD, METRIC, project, rows, store_traces, traces_file

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

TOTAL = 10 + DEGRADED


def _watched(tmp_path, url: str):
    watched = project(
        tmp_path,
        f'otlp = "{url}"\nreference = {{ target = {{ answer_relevance_token_recall = 0.9 }} }}\n'
        "sinks = { stderr = false }\n",
    )
    watch(watched, load_statistics(), stop=StopRule(seconds=0), say=lambda _: None)
    store_traces(watched, traces_file(tmp_path / "v1.jsonl", range(1, 11), "1", GOOD))
    store_traces(watched, traces_file(tmp_path / "v2.jsonl", range(11, 11 + DEGRADED), "2", BAD))
    return watched


@pytest.mark.timeout(300)
def test_evaluations_and_the_alarm_reach_the_otlp_receiver(tmp_path):
    with OTLPLogsReceiver() as receiver:
        watched = _watched(tmp_path, receiver.url)
        report = watch(watched, load_statistics(), stop=StopRule(traces=TOTAL), say=lambda _: None)
        records = receiver.log_records()
    assert report.events_sent == TOTAL and report.events_failed == 0
    evaluations = [r for _, r in records if r.event_name == "gen_ai.evaluation.result"]
    alarms = [r for _, r in records if r.event_name == "ragassay.watch.alarm"]
    assert len(evaluations) == TOTAL and len(alarms) == 1
    stored = dict(
        rows(
            tmp_path,
            "SELECT o.question_id, m.value FROM outputs o JOIN metric_values m ON m.output_id = o.id "
            f"WHERE m.metric = '{METRIC}'",
        )
    )
    sent = {}
    for record in evaluations:
        values = attributes(record)
        assert values["gen_ai.evaluation.name"] == METRIC and values["ragassay.run.id"] == report.run_id
        sent[record.trace_id.hex()] = values["gen_ai.evaluation.score.value"]
        assert record.span_id.hex()  # on the trace's answer span
    assert sent == stored  # every stored value went out, with its value
    alarm = attributes(alarms[0])
    assert alarm["ragassay.watch.metric"] == METRIC and alarm["ragassay.run.id"] == report.run_id
    assert alarm["ragassay.watch.text"] == report.alarms[0]["text"]
    sent_alarm = json.loads(alarm["ragassay.watch.alarm"])
    assert list(sent_alarm["versions"]["service.version"])[0] == "2"  # the first suspect first, as stored
    assert sent_alarm == {k: v for k, v in report.alarms[0].items() if k not in ("delivered", "sinks")}
    assert alarm["ragassay.watch.change"] < 0 and report.alarms[0]["sinks"] == {"otlp": "ok"}


@pytest.mark.timeout(300)
def test_a_refusing_receiver_is_said_once_and_the_watch_goes_on(tmp_path):
    lines: list[str] = []
    with OTLPLogsReceiver(status=400) as receiver:  # refused for good (a 5xx the exporter retries, for seconds)
        watched = _watched(tmp_path, receiver.url)
        report = watch(watched, load_statistics(), stop=StopRule(traces=TOTAL), say=lines.append)
    assert report.decided == {"scored": TOTAL} and report.events_sent == 0 and report.events_failed == TOTAL
    assert len([line for line in lines if "evaluation events not sent" in line]) == 1
    assert not report.alarms[0]["delivered"] and report.alarms[0]["sinks"]["otlp"] != "ok"
