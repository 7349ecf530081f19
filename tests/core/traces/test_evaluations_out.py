"""Evaluations out: gen_ai.evaluation.result events on the evaluated spans, received by a loopback OTLP receiver
through the official exporter and parsed with the official proto package, or written as OTLP JSON."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragassay import __version__
from ragassay.cli.main import cli

from servers.otlp_logs import OTLPLogsReceiver, attributes
from trace_runs import DAYS, PER_DAY, answer_span, make_run, trace_id

METRICS = ("exact_match", "k_precision")  # k_precision is unscored: the outputs have no contexts
EVENTS = DAYS * PER_DAY * 3 - 3  # (trace, metric or judge), less the broken trace's three


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export-evals")
    return folder, make_run(folder, metrics=METRICS, broken=[5])


def export(folder, run_id, target):
    return CliRunner().invoke(cli, ["traces", "export-evals", run_id, "--otlp", target, "-c", str(folder)])


def by_key(records):
    return {(r.trace_id.hex(), attributes(r)["gen_ai.evaluation.name"]): r for _, r in records}


def test_the_receiver_gets_one_event_per_trace_and_metric_on_the_answer_span(project):
    folder, run_id = project
    with OTLPLogsReceiver() as receiver:
        result = export(folder, run_id, receiver.url)
        records = receiver.log_records()
    assert result.exit_code == 0, result.stderr
    assert f"{EVENTS} evaluation event(s)" in result.stderr and f"{DAYS * PER_DAY - 1} unscored" in result.stderr
    assert "3 score(s) not sent" in result.stderr and "malformed trace ids" in result.stderr
    assert len(records) == EVENTS
    assert all(r.event_name == "gen_ai.evaluation.result" for _, r in records)
    assert records[0][0] == {"service.name": "ragassay", "service.version": __version__}
    found = by_key(records)
    i = 2 * PER_DAY + 1  # day 2, answered "lyon"
    exact = found[(trace_id(i), "exact_match")]
    assert exact.span_id.hex() == answer_span(i)
    values = attributes(exact)
    assert values["gen_ai.evaluation.score.value"] == 0.0 and "gen_ai.evaluation.score.label" not in values
    assert values["ragassay.run.id"] == run_id and values["ragassay.system"] == "app"
    assert values["ragassay.evaluator.name"] == "exact_match" and values["ragassay.evaluator.version"] == __version__
    judged = attributes(found[(trace_id(i), "match")])
    assert judged["gen_ai.evaluation.score.label"] == "incorrect" and judged["gen_ai.evaluation.score.value"] == 0.0
    assert judged["ragassay.evaluation.kind"] == "judge" and judged["ragassay.judge.id"] == "match:exact"
    assert judged["gen_ai.evaluation.explanation"]
    unscored = attributes(found[(trace_id(0), "k_precision")])
    assert "gen_ai.evaluation.score.value" not in unscored and unscored["error.type"] == "unscored"
    assert "no retrieved contexts" in unscored["gen_ai.evaluation.explanation"]
    assert (trace_id(5), "exact_match") not in found


def test_a_refusing_receiver_is_an_error_that_says_how_many_went(project):
    folder, run_id = project
    with OTLPLogsReceiver(status=400) as receiver:
        result = export(folder, run_id, receiver.url + "/v1/logs")
    assert result.exit_code == 2
    assert "did not accept the evaluations after 0 of" in result.output


def test_otlp_json_file_has_hex_ids_and_the_same_events(project, tmp_path):
    folder, run_id = project
    path = tmp_path / "evals.json"
    assert export(folder, run_id, str(path)).exit_code == 0
    requests = [json.loads(line) for line in path.read_text().splitlines()]
    records = [r for q in requests for rl in q["resourceLogs"] for sl in rl["scopeLogs"] for r in sl["logRecords"]]
    assert len(records) == EVENTS
    first = records[0]
    assert first["traceId"] == trace_id(0) and first["spanId"] == answer_span(0)
    assert first["eventName"] == "gen_ai.evaluation.result" and "body" not in first
    again = tmp_path / "again.json"
    export(folder, run_id, str(again))
    assert again.read_bytes() == path.read_bytes()  # the same run gives the same bytes
