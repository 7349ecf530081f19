"""``traces`` with ``conversations = true``: the traces of one session id (OpenInference ``session.id``, GenAI
``gen_ai.conversation.id``) become the turns of one conversation in start-time order, each with the earlier
questions and answers as its history, and ``trace_replay`` scores them; a trace without a session stays a single
question (warned with the count); ``where`` picks turns, the others stay history (whole-session sampling:
tests/core/traces/test_sessions.py)."""

from __future__ import annotations

import json

import pytest

import ragassay

from otlp_traces import genai_trace, imported_project, openinference_trace, request, store_rows, tid

CONFIG = """
[dataset]
source = "traces"
options = {{ conversations = true {options} }}
[systems.prod]
rag = "trace_replay"
[evaluation]
metrics = ["k_precision", "answer_relevance_token_recall"]
"""
# (trace number, start in ms, question, answer): trace-id order is not start order
ALPHA = [(5, 3000, "Who runs the lab?", "first retrieved"), (1, 1000, "Where is the lab?", "second retrieved")]
ALPHA += [(3, 2000, "When did it open?", "first retrieved and second")]
BETA = [(2, 4000, "What is X?", "genai doc"), (6, 500, "Tell me about X", "genai doc X"), (4, 6000, "And Y?", "none")]


def _with_session(spans: list[dict], key: str, session: str | None) -> list[dict]:
    """The spans with ``key`` set to ``session`` on every span that has it (removed when None)."""
    for span in spans:
        kept = [a for a in span["attributes"] if a["key"] != key]
        if len(kept) != len(span["attributes"]) and session is not None:
            kept.append({"key": key, "value": {"stringValue": session}})
        span["attributes"] = kept
    return spans


def _traces():
    spans = []
    for n, start, question, answer in ALPHA:
        spans += _with_session(openinference_trace(n, question, answer, start=start), "session.id", "alpha")
    for n, start, question, answer in BETA:
        spans += _with_session(genai_trace(n, question, answer, start=start), "gen_ai.conversation.id", "beta")
    spans += _with_session(openinference_trace(7, "Alone?", "second retrieved", start=100), "session.id", None)
    return [request(spans)]


def _project(root, requests, options=""):
    return imported_project(root, CONFIG.format(options=options), requests)


def test_sessions_import_as_conversations_in_start_order_and_score_with_trace_replay(tmp_path):
    root = _project(tmp_path / "p", _traces())
    run = ragassay.run(root)
    assert not run.failed
    samples = {q: json.loads(s) for q, s in store_rows(root, "select question_id, sample_json from run_samples")}
    assert sorted(samples) == sorted(["alpha::1", "alpha::2", "alpha::3", "beta::1", "beta::2", "beta::3", tid(7)])
    expected = {"alpha": sorted(ALPHA, key=lambda t: t[1]), "beta": sorted(BETA, key=lambda t: t[1])}
    for session, turns in expected.items():
        for position, (n, _, question, _) in enumerate(turns, start=1):
            sample = samples[f"{session}::{position}"]
            assert (sample["conversation_id"], sample["turn"], sample["question"]) == (session, position, question)
            assert sample["metadata"]["trace"]["trace_id"] == tid(n)
            history = [(t["speaker"], t["text"]) for t in sample["history"]]
            earlier = [(("user", q), ("agent", a)) for _, _, q, a in turns[: position - 1]]
            assert history == [turn for pair in earlier for turn in pair]
    alone = samples[tid(7)]
    assert alone["conversation_id"] is None and alone["turn"] is None and alone["history"] == []
    assert any("1 trace(s) have no session id (session.id / gen_ai.conversation.id)" in w for w in run.warnings)

    outputs = store_rows(root, "select question_id, answer, output_json from outputs where status = 'ok'")
    assert len(outputs) == 7
    for question_id, _, raw in outputs:  # each turn replayed from its own trace
        assert json.loads(raw)["trace"]["trace_id"] == samples[question_id]["metadata"]["trace"]["trace_id"]
    answers = {q: a for q, a, _ in outputs}
    assert answers["alpha::1"] == "second retrieved" and answers["beta::3"] == "none"
    values = dict(
        store_rows(
            root,
            "select o.question_id, m.value from metric_values m join outputs o on o.id = m.output_id "
            "where m.metric = 'k_precision'",
        )
    )
    # OpenInference turns answer from the reranked context "second retrieved" ("first retrieved": half in it);
    # GenAI ones from "genai doc" ("genai doc X": two of three tokens)
    assert (values["alpha::1"], values["alpha::2"]) == (1.0, 0.5)
    assert (values["beta::1"], values["beta::2"]) == (pytest.approx(2 / 3), 1.0)


def test_where_picks_the_turns_and_the_others_stay_history(tmp_path):
    root = _project(tmp_path / "p", _traces(), options=', where = { since = "2025-01-01T12:00:01.500Z" }')
    run = ragassay.run(root)
    samples = {q: json.loads(s) for q, s in store_rows(root, "select question_id, sample_json from run_samples")}
    # alpha's turn 1 (at +1.0 s) and beta's turn 1 (+0.5 s) and the lone trace (+0.1 s) are before the window
    assert sorted(samples) == ["alpha::2", "alpha::3", "beta::2", "beta::3"] and not run.failed
    assert [t["text"] for t in samples["alpha::2"]["history"]] == ["Where is the lab?", "second retrieved"]
    assert not any("no session id" in w for w in run.warnings)  # the lone trace was not selected


def test_conversations_and_pair_by_question_are_refused_together(tmp_path):
    root = _project(tmp_path / "p", _traces(), options=', pair_by = "question"')
    with pytest.raises(ragassay.ConfigError, match="conversations = true and pair_by = 'question' cannot be combined"):
        ragassay.run(root)
