"""The watch's ``sample`` and ``where`` rules: a trace outside the hashed sample is decided ``skipped`` by its id
alone (before it is read or mapped: an unmappable one outside is skipped, not unmapped, and has no start time),
one left out by ``where`` is skipped after mapping, and only the selected traces are scored and stored."""

from __future__ import annotations

import hashlib

import pytest

from ragassay.cli.watch_cmd import load_statistics as statistics
from ragassay.watch import StopRule, watch

from otlp_traces import tid
from watch_streams import GOOD, project, rows, store_traces, traces_file

pytest.importorskip("opentelemetry.proto")

TRACES = range(1, 41)
UNMAPPABLE = range(41, 51)  # no answer: not mapped when read
TARGET = "reference = { target = { answer_relevance_token_recall = 0.9 } }\n"


def _in_half(trace_id: str) -> bool:
    """The documented hash rule, written out here: sha256 of the id, first 8 bytes as a fraction of 2**64."""
    return int(hashlib.sha256(trace_id.encode()).hexdigest()[:16], 16) < 2**63


def _decisions(tmp_path) -> dict[str, tuple]:
    found = rows(tmp_path, "SELECT trace_id, status, reason, started_at FROM watch_traces")
    return {trace_id: (status, reason, started_at) for trace_id, status, reason, started_at in found}


@pytest.mark.timeout(300)
def test_a_trace_outside_the_sample_is_skipped_by_its_id_before_it_is_read(tmp_path):
    watched = project(tmp_path, TARGET + 'sample = "50%"\n')
    watch(watched, statistics(), stop=StopRule(seconds=0), say=lambda _: None)  # creates the watch run
    store_traces(watched, traces_file(tmp_path / "good.jsonl", TRACES, "1", GOOD))
    store_traces(watched, traces_file(tmp_path / "empty.jsonl", UNMAPPABLE, "1", ""))
    total = len(TRACES) + len(UNMAPPABLE)
    report = watch(watched, statistics(), stop=StopRule(traces=total), say=lambda _: None)
    inside = {tid(n) for n in [*TRACES, *UNMAPPABLE] if _in_half(tid(n))}
    assert 0 < len(inside) < total  # both kinds of decision are exercised
    decided = _decisions(tmp_path)
    assert len(decided) == total
    for n in [*TRACES, *UNMAPPABLE]:
        status, reason, started_at = decided[tid(n)]
        if tid(n) not in inside:
            assert (status, reason, started_at) == ("skipped", "not in the sample (50%)", None)
        else:
            assert status == ("scored" if n in TRACES else "unmapped")
            assert (started_at is not None) == (n in TRACES)  # an unmapped trace has no start time either
    scored = {trace_id for trace_id, (status, _, _) in decided.items() if status == "scored"}
    assert report.decided == {
        "scored": len(scored),
        "skipped": total - len(inside),
        "unmapped": len(inside) - len(scored),
    }
    outputs = rows(tmp_path, f"SELECT question_id FROM outputs WHERE run_id = '{report.run_id}'")
    assert {row[0] for row in outputs} == scored


@pytest.mark.timeout(300)
def test_where_leaves_out_the_traces_it_does_not_match_after_mapping(tmp_path):
    watched = project(tmp_path, TARGET + "where = { 'service.version' = '2' }\n")
    watch(watched, statistics(), stop=StopRule(seconds=0), say=lambda _: None)
    store_traces(watched, traces_file(tmp_path / "v1.jsonl", range(1, 6), "1", GOOD))
    store_traces(watched, traces_file(tmp_path / "v2.jsonl", range(6, 11), "2", GOOD))
    report = watch(watched, statistics(), stop=StopRule(traces=10), say=lambda _: None)
    assert report.decided == {"scored": 5, "skipped": 5}
    decided = _decisions(tmp_path)
    for n in range(1, 11):
        status, reason, started_at = decided[tid(n)]
        assert started_at is not None  # read and mapped: its start is known
        assert (status, reason) == (("skipped", "left out by [watch] where") if n <= 5 else ("scored", None))
