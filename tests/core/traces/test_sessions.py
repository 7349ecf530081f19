"""Stored traces read as sessions (:func:`ragassay.traces.scan_sessions`): whole sessions sampled by a hash of
the session id, turns in start-time order (ties by trace id) across the spill file's batches, unmappable traces
reported, traces without a session id alone."""

from __future__ import annotations

import json

import pytest

from ragassay.store import open_store
from ragassay.traces import Session, Unmapped, sampled, scan_sessions
from ragassay.traces import sessions as sessions_module
from ragassay.traces.ingest import import_paths

from otlp_traces import openinference_trace, request, sid, span, tid


def _with_session(spans: list[dict], session: str | None) -> list[dict]:
    for item in spans:
        kept = [a for a in item["attributes"] if a["key"] != "session.id"]
        if len(kept) != len(item["attributes"]) and session is not None:
            kept.append({"key": "session.id", "value": {"stringValue": session}})
        item["attributes"] = kept
    return spans


def _store(tmp_path, spans) -> str:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    (tmp_path / "t.json").write_text(json.dumps(request(spans)))
    store = open_store(url)
    try:
        import_paths(store, [tmp_path / "t.json"])
    finally:
        store.close()
    return url


def test_sample_keeps_whole_sessions_chosen_by_the_session_id(tmp_path):
    spans = []
    for s in range(30):
        for k in range(3):
            trace = openinference_trace(1 + s * 3 + k, f"q {s}-{k}", f"a {s}-{k}", start=k * 10)
            spans += _with_session(trace, f"sess-{s}-é")  # a non-ASCII session id hashes too
    sessions = list(scan_sessions(_store(tmp_path, spans), sample="40%"))
    kept = {s.session_id for s in sessions}
    assert kept == {f"sess-{s}-é" for s in range(30) if sampled(f"sess-{s}-é", 0.4)}
    assert 3 <= len(kept) <= 25  # a 40% subset of 30 sessions, not all and not none
    for session in sessions:
        number = session.session_id.split("-")[1]
        assert [t.question for t in session.turns] == [f"q {number}-{k}" for k in range(3)]


def test_turns_by_start_then_trace_id_across_batches_with_unmapped_and_lone_traces(tmp_path, monkeypatch):
    monkeypatch.setattr(sessions_module, "BATCH", 2)  # the spill file is written in several batches
    starts = {1: 50, 2: 10, 3: 30, 4: 10, 5: 20}  # traces 2 and 4 start together: the smaller trace id first
    spans = []
    for n, start in starts.items():
        spans += _with_session(openinference_trace(n, f"q{n}", f"a{n}", start=start), "one")
    spans += _with_session(openinference_trace(6, "lone late", "a6", start=90), None)
    spans += _with_session(openinference_trace(7, "lone early", "a7", start=5), None)
    spans += [span(tid(9), sid(9, 1), None, "root", {"input.value": "q?", "session.id": "one"})]  # no answer
    items = list(scan_sessions(_store(tmp_path, spans)))
    assert [i.trace_id for i in items if isinstance(i, Unmapped)] == [tid(9)]
    found = [i for i in items if isinstance(i, Session)]
    assert [(s.session_id, [t.question for t in s.turns]) for s in found] == [
        ("one", ["q2", "q4", "q5", "q3", "q1"]),
        ("", ["lone early"]),
        ("", ["lone late"]),
    ]
    assert found[0].turns[0].trace["trace_id"] == tid(2) and found[0].turns[0].answer == "a2"


@pytest.mark.parametrize("where", [{"service.version": "2.0"}, {"session.id": "other"}])
def test_a_session_without_a_selected_turn_is_left_out(tmp_path, where):
    spans = _with_session(openinference_trace(1, "q1", "a1"), "one")
    assert list(scan_sessions(_store(tmp_path, spans), where=where)) == []
