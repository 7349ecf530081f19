"""The reference a watch opens with: a stored run (``reference = { run = ... }``: the mean of that run's values of
the metric) or a window of stored traces (``since``/``until``: the traces started in it are scored by the watch,
recorded as ``reference``, and their mean is the reference); the detector starts against it."""

from __future__ import annotations

import pytest

from ragassay.cli.watch_cmd import load_statistics
from ragassay.models import MetricValue, RAGOutput, Sample
from ragassay.store.units import UnitResult
from ragassay.watch import StopRule, watch

from watch_streams import BAD, GOOD, METRIC, project, rows, store_traces, traces_file

pytest.importorskip("opentelemetry.proto")

STORED = [0.2, 0.4, 0.9, 0.7]  # the reference run's values of the metric


def _reference_run(watched) -> str:
    store = watched.open_store()
    try:
        run = {"id": "ref1", "fingerprint": "f-ref", "project": "watched", "config_path": "x", "config_json": "{}"}
        samples = [Sample(question_id=f"q{i}", question="q?") for i in range(len(STORED) + 1)]
        store.create_run(
            {**run, "spec_json": "{}", "ragassay_version": "0", "sample_count": 5}, [("app", "{}")], samples
        )
        units = [
            UnitResult("app", f"q{i}", "ok", RAGOutput(answer="a"), metrics=[MetricValue(metric=METRIC, value=v)])
            for i, v in enumerate(STORED)
        ]
        unscored = MetricValue(metric=METRIC, value=None, unscored_reason="no answer")
        units.append(UnitResult("app", "q4", "ok", RAGOutput(answer=""), metrics=[unscored]))
        store.write_units("ref1", units, None)
        store.finish_run("ref1", "complete", [])
    finally:
        store.close()
    return "ref1"


def test_a_stored_run_reference_is_the_mean_of_its_values(tmp_path):
    watched = project(tmp_path, 'reference = { run = "ref1" }\n')
    _reference_run(watched)
    report = watch(watched, load_statistics(), stop=StopRule(seconds=0), say=lambda _: None)
    assert report.detectors[METRIC]["reference"] == pytest.approx(sum(STORED) / len(STORED))
    assert report.detectors[METRIC]["n"] == 0


def test_a_run_without_the_metric_is_refused_with_the_key(tmp_path):
    from ragassay.errors import ConfigError

    watched = project(tmp_path, 'reference = { run = "ref1" }\n[[watch.judges]]\nname = "match"\n')
    _reference_run(watched)
    with pytest.raises(ConfigError, match="no scored value of judge:match"):
        watch(watched, load_statistics(), stop=StopRule(seconds=0), say=lambda _: None)


def test_a_window_reference_is_the_mean_of_the_traces_started_in_it(tmp_path):
    window = 'reference = { since = "2025-01-01T12:00:00Z", until = "2025-01-01T12:01:00Z" }\n'
    watched = project(tmp_path, window)
    store_traces(watched, traces_file(tmp_path / "in-good.jsonl", range(1, 7), "1", GOOD, start_ms=1_000))
    store_traces(watched, traces_file(tmp_path / "in-bad.jsonl", range(7, 10), "1", BAD, start_ms=30_000))
    store_traces(watched, traces_file(tmp_path / "before.jsonl", range(10, 14), "0", BAD, start_ms=-60_000))
    store_traces(watched, traces_file(tmp_path / "after.jsonl", range(14, 18), "2", GOOD, start_ms=61_000))
    report = watch(watched, load_statistics(), stop=StopRule(seconds=0), say=lambda _: None)
    decided = rows(tmp_path, "SELECT trace_id FROM watch_traces WHERE status = 'reference'")
    assert len(decided) == 9  # the six good and three bad traces started in [since, until)
    values = rows(
        tmp_path,
        f"SELECT m.value FROM metric_values m JOIN outputs o ON m.output_id = o.id WHERE m.metric = '{METRIC}' "
        "AND o.question_id IN (SELECT trace_id FROM watch_traces WHERE status = 'reference')",
    )
    stored = [v for (v,) in values]
    assert len(stored) == 9 and len(set(stored)) == 2  # good and bad answers score differently
    assert report.detectors[METRIC]["reference"] == pytest.approx(sum(stored) / len(stored))
    again = watch(watched, load_statistics(), stop=StopRule(seconds=0), say=lambda _: None)
    assert again.detectors[METRIC]["reference"] == report.detectors[METRIC]["reference"]  # kept, not re-scored
    assert rows(tmp_path, "SELECT count(*) FROM outputs") == [(9,)]
