"""Trace ingestion and mapping on traces written by hand from the public specs (OTLP JSON encoding,
OpenInference, OpenTelemetry GenAI conventions): every accepted file layout, idempotent import, a malformed
payload stores nothing, unmappable traces are listed with the reason."""

from __future__ import annotations

import json
import warnings

import pytest

from ragassay import DatasetError
from ragassay.store import open_store
from ragassay.traces import read_traces, scan_traces
from ragassay.traces.ingest import import_paths
from ragassay.traces.otlp import request_from_json

from otlp_traces import T0, genai_trace, openinference_trace, request, sid, span, tid


@pytest.fixture
def store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'results.db'}")
    yield store
    store.close()


def _write(path, payload):
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_openinference_trace_maps_question_answer_reranked_contexts_and_keeps_unknown_attributes(tmp_path, store):
    _write(tmp_path / "oi.json", request(openinference_trace(1, "What is X?", "X is Y.")))
    import_paths(store, [tmp_path / "oi.json"])
    (trace,) = read_traces(store)
    assert (trace.question, trace.answer) == ("What is X?", "X is Y.")
    # the reranker ran after the (nested) retriever: its documents are the contexts
    assert [(c.id, c.text, c.score) for c in trace.contexts] == [("d2", "second retrieved", 3.5)]
    assert [s.kind for s in trace.spans] == ["CHAIN", "AGENT", "RETRIEVER", "RERANKER", "TOOL", "LLM"]
    assert trace.answer_span_id == sid(1, 6) and trace.root_span_id == sid(1, 1)
    assert (trace.model, trace.tokens.prompt, trace.tokens.completion) == ("gpt-test", 12, 5)
    assert (trace.session_id, trace.service_name, trace.service_version) == ("s1", "rag-app", "1.0")
    assert trace.start_ns == T0 and trace.latency_s == pytest.approx(0.9)
    root = trace.spans[0]
    assert root.attributes["app.custom"] == "kept" and trace.spans[4].attributes["tool.name"] == "lookup"


def test_without_reranker_the_retriever_documents_are_the_contexts(tmp_path, store):
    _write(tmp_path / "oi.json", request(openinference_trace(2, "Q?", "A.", rerank=False, tool=False)))
    import_paths(store, [tmp_path])
    (trace,) = read_traces(store)
    assert [(c.id, c.score) for c in trace.contexts] == [("d1", 0.9), ("d2", 0.5)]


@pytest.mark.parametrize("events", [False, True])
def test_genai_trace_question_and_answer_from_messages_in_attributes_or_events(tmp_path, store, events):
    _write(tmp_path / "g.json", request(genai_trace(3, "Who wrote it?", "Ada.", events=events)))
    import_paths(store, [tmp_path / "g.json"])
    (trace,) = read_traces(store)
    assert (trace.question, trace.answer) == ("Who wrote it?", "Ada.")
    assert [(c.id, c.text, c.score) for c in trace.contexts] == [("g1", "genai doc", 0.7)]
    assert (trace.model, trace.tokens.prompt, trace.tokens.completion) == ("m-resp", 7, 3)
    assert trace.session_id == "conv-1" and trace.answer_span_id == sid(3, 3)
    assert [s.kind for s in trace.spans] == ["", "RETRIEVER", "LLM"]


def test_file_layouts_collector_lines_resource_spans_jsonl_and_protobuf(tmp_path, store):
    first, second = request(openinference_trace(1, "A?", "a")), request(genai_trace(2, "B?", "b"))
    (tmp_path / "collector.json").write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    (tmp_path / "resource_spans.jsonl").write_text(json.dumps(request(genai_trace(3, "C?", "c"))["resourceSpans"][0]))
    raw = request_from_json(request(genai_trace(4, "D?", "d")), "x").SerializeToString()
    (tmp_path / "one.pb").write_bytes(raw)
    framed = request_from_json(request(genai_trace(5, "E?", "e")), "x").SerializeToString()
    (tmp_path / "framed.pb").write_bytes(len(framed).to_bytes(4, "big") + framed + len(raw).to_bytes(4, "big") + raw)
    report = import_paths(store, [tmp_path])
    assert (report.files, report.requests, report.traces_new) == (4, 6, 5)  # D twice: stored once
    assert sorted(t.question for t in read_traces(store)) == ["A?", "B?", "C?", "D?", "E?"]


def test_import_twice_stores_each_span_once(tmp_path, store):
    _write(tmp_path / "t.json", request(openinference_trace(1, "A?", "a") + genai_trace(2, "B?", "b")))
    first = import_paths(store, [tmp_path / "t.json"])
    again = import_paths(store, [tmp_path / "t.json"])
    assert (first.spans_new, first.traces_new) == (9, 2)
    assert (again.spans_read, again.spans_new, again.traces_new, again.traces_after) == (9, 0, 0, 2)


def test_spans_of_one_trace_in_several_requests_are_assembled(tmp_path, store):
    spans = openinference_trace(1, "A?", "a")
    (tmp_path / "parts.jsonl").write_text(
        "\n".join(json.dumps(request([s])) for s in reversed(spans)) + "\n", encoding="utf-8"
    )
    import_paths(store, [tmp_path / "parts.jsonl"])
    (trace,) = read_traces(store)
    assert len(trace.spans) == 6 and trace.answer == "a"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{broken", "line 2: invalid JSON at column 2: expected a key in double quotes"),
        ('{"spans": []}', "line 2: not an OTLP trace payload"),
        (json.dumps(request([span("abc", "b" * 16, None, "x")])), "traceId has"),
        (json.dumps(request([span("0" * 32, "b" * 16, None, "x")])), "all zeros"),
        (json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{"kind": "NOT_A_KIND"}]}]}]}), "malformed OTLP JSON"),
    ],
)
def test_a_malformed_payload_is_a_clear_error_and_nothing_of_the_import_is_stored(tmp_path, store, line, message):
    good = json.dumps(request(openinference_trace(1, "A?", "a")))
    (tmp_path / "bad.json").write_text(good + "\n" + line + "\n")
    with pytest.raises(DatasetError, match=message) as error:
        import_paths(store, [tmp_path / "bad.json"])
    assert "bad.json" in str(error.value)
    assert list(scan_traces(store)) == []


def test_unmappable_traces_are_counted_with_the_reason(tmp_path, store):
    t1, t2, t3 = tid(11), tid(12), tid(13)
    spans = [
        span(t1, sid(11, 1), None, "root without input", {"output.value": "a"}),  # no question anywhere
        span(t2, sid(12, 2), sid(12, 1), "orphan", {"input.value": "q", "output.value": "a"}),  # root not received
        span(t3, sid(13, 1), None, "root", {"input.value": "q?"}),  # no answer
    ]
    _write(tmp_path / "t.json", request(spans + openinference_trace(1, "A?", "a")))
    import_paths(store, [tmp_path / "t.json"])
    reasons = {item.trace_id: item.reason for item in scan_traces(store) if hasattr(item, "reason")}
    assert reasons[t1].startswith("no question") and "input.value" in reasons[t1]
    assert reasons[t2] == f"no root span: parent span {sid(12, 1)} was not received"
    assert reasons[t3].startswith("no answer")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mapped = list(read_traces(store))
    assert [t.question for t in mapped] == ["A?"]
    assert "3 stored trace(s) could not be mapped" in str(caught[0].message)


def test_custom_mapping_reads_a_teams_own_span_names_and_keys(tmp_path, store):
    t = tid(21)
    spans = [
        span(t, sid(21, 1), None, "handler", {"app.query": "Where?", "app.reply": "There."}),
        span(t, sid(21, 2), sid(21, 1), "vector_search", {"hits.0.document.id": "h1", "hits.0.document.content": "x"}),
    ]
    _write(tmp_path / "t.json", request(spans, extra_resource={"deploy.tag": "blue"}))
    import_paths(store, [tmp_path / "t.json"])
    from ragassay import TraceMapping

    mapping = TraceMapping(
        question_keys=["app.query"],
        answer_keys=["app.reply"],
        document_prefixes=["hits"],
        span_kinds={"vector_search": "RETRIEVER"},
        version_attribute="deploy.tag",
    )
    (trace,) = read_traces(store, mapping=mapping)
    assert (trace.question, trace.answer, trace.service_version) == ("Where?", "There.", "blue")
    assert [c.id for c in trace.contexts] == ["h1"]
    with pytest.raises(ValueError, match="extra"):
        TraceMapping(question_key="typo")


def test_where_filters_fields_attributes_and_time_window_and_sample_is_a_stable_subset(tmp_path, store):
    payload = {
        "resourceSpans": request(openinference_trace(1, "A?", "a", start=0), version="1.0")["resourceSpans"]
        + request(genai_trace(2, "B?", "b", start=60_000), version="2.0")["resourceSpans"]
    }
    _write(tmp_path / "t.json", payload)
    import_paths(store, [tmp_path / "t.json"])

    def questions(**kwargs):
        return [t.question for t in read_traces(store, **kwargs)]

    assert questions(where={"service.version": "2.0"}) == ["B?"]
    assert questions(where={"route": "/ask"}) == ["A?"]  # a span attribute
    assert questions(where={"model": ["m-resp", "other"]}) == ["B?"]
    assert questions(where={"since": "2025-01-01T12:00:30Z"}) == ["B?"]  # the GenAI trace starts a minute later
    assert questions(where={"until": "2025-01-01T12:00:30"}) == ["A?"]
    with pytest.raises(Exception, match="ISO 8601"):
        questions(where={"since": "yesterday"})
    from ragassay.traces import sampled

    many = [f"{n:032x}" for n in range(1, 2001)]
    subset = [t for t in many if sampled(t, 0.05)]
    assert 60 <= len(subset) <= 140 and subset == [t for t in many if sampled(t, 0.05)]
    assert set(subset) <= {t for t in many if sampled(t, 0.5)}  # a larger sample contains the smaller one
