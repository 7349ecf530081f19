"""citation_groundedness against a scripted OpenAI-compatible server (the real openai client and generator), and
with the offline lexical checker; then stored details through a real run of the naive RAG and `ragassay show`."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import threading
import time

import pytest

from ragassay import testing
from ragassay.components import ComponentContext
from ragassay.models import MetricResult, RAGOutput, Sample, Unscored
from ragassay.plugin_manager import get_plugin_host
from ragassay.plugins.judges import fact_check
from ragassay.plugins.judges.groundedness import CitationGroundedness
from tests.conftest import ragassay_cli
from tests.servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

SAMPLE = Sample(question_id="q", question="What are the health benefits of eating apples?")
CONTEXTS = [
    "A 2019 clinical study found that regular apple consumption was associated with lower LDL cholesterol levels.",
    "Apples contain fibre, which supports digestion.",
]


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-groundedness")


def metric(tmp_path, server=None, **options):
    if server is not None:
        options["generator"] = {"name": "openai", "options": {"model": "gpt-4o", "base_url": server.url + "/v1"}}
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")
    return context.build("metric", {"name": "citation_groundedness", "options": options})


def score(m, answer, contexts=CONTEXTS):
    return asyncio.run(m.ascore(SAMPLE, RAGOutput(answer=answer, contexts=list(contexts))))


def checked(request) -> dict:
    """The {"text", "fact"} the fact-checker was asked about (the first user message; re-asks come after it)."""
    return json.loads(next(m["content"] for m in request.json["messages"] if m["role"] == "user"))


def verdicts(table: dict[str, bool]):
    """A fact-checker that answers by the segment's text (requests of one round arrive in any order)."""

    def reply(request):
        text = checked(request)["text"]
        return Turn(text=json.dumps({"explanation": f"about {text!r}", "correct": table[text]}))

    return reply


def test_cited_segments_are_checked_against_their_own_sources_only(tmp_path, key):
    answer = "Apples lower LDL cholesterol [1]. Apples support digestion [2].\n\nSo apples are good for you."
    with OpenAIChatServer() as server:
        server.default = verdicts(
            {
                "Apples lower LDL cholesterol": True,
                "Apples support digestion": False,
                "So apples are good for you.": True,
            }
        )
        result = score(metric(tmp_path, server), answer)
        asked = [checked(r) for r in server.requests]
        system = server.requests[0].json["messages"][0]["content"]
    assert isinstance(result, MetricResult) and result.value == pytest.approx(2 / 3)
    facts = {a["text"]: a["fact"] for a in asked}
    assert facts["Apples lower LDL cholesterol"] == CONTEXTS[0]
    assert facts["Apples support digestion"] == CONTEXTS[1]
    # round two: the uncited conclusion against the segments judged true, not the false one, not the sources
    assert facts["So apples are good for you."] == "Apples lower LDL cholesterol"
    assert [a["text"] for a in asked][-1] == "So apples are good for you."  # after round one
    assert system == fact_check.FACT_CHECK_PROMPT
    segments = result.details["segments"]
    assert [(s["cites"], s["round"], s["correct"]) for s in segments] == [
        ([1], 1, True),
        ([2], 1, False),
        ([], 2, True),
    ]
    assert segments[1]["explanation"] == "about 'Apples support digestion'"
    assert result.details["true_segments"] == 2 and result.details["total_segments"] == 3


def test_a_false_cited_segment_leaves_the_uncited_conclusion_nothing_to_stand_on(tmp_path, key):
    answer = "1. Eating apples can reduce blood pressure [1].\n\nIn conclusion, apples make a happy life."
    with OpenAIChatServer() as server:
        server.default = verdicts({"1. Eating apples can reduce blood pressure": False})
        result = score(metric(tmp_path, server), answer)
        assert server.calls == 1  # the conclusion is false without a call: no segment was judged true
    assert result.value == 0.0
    conclusion = result.details["segments"][1]
    assert conclusion["correct"] is False and "no cited segment was judged true" in conclusion["explanation"]


def test_an_answer_without_citations_scores_zero_without_calls(tmp_path, key):
    with OpenAIChatServer() as server:
        result = score(metric(tmp_path, server), "Apples are healthy.\n\nPears are healthy too.")
        assert server.calls == 0
    assert result.value == 0.0 and [s["round"] for s in result.details["segments"]] == [2, 2]


@pytest.mark.parametrize("answer", ["", "   \n", "## Benefits\n\n**Heart**\n"])
def test_no_segments_is_unscored_with_the_reason(tmp_path, key, answer):
    with OpenAIChatServer() as server:
        assert score(metric(tmp_path, server), answer) == Unscored(
            reason="the answer has no segments to fact-check (empty, or only headers)"
        )
        assert server.calls == 0


def test_a_citation_of_a_missing_source_is_false_without_a_call(tmp_path, key):
    answer = "Apples lower LDL cholesterol [1]. Apples cure colds [3]. Apples grow on trees [2, 7]."
    with OpenAIChatServer() as server:
        server.default = verdicts({"Apples lower LDL cholesterol": True})
        result = score(metric(tmp_path, server), answer)
        assert [checked(r)["text"] for r in server.requests] == ["Apples lower LDL cholesterol"]
    assert result.value == pytest.approx(1 / 3)
    rows = result.details["segments"]
    assert rows[1]["explanation"] == "cites source 3, which does not exist (the output has sources 1-2)"
    assert rows[2]["explanation"] == "cites source 7, which does not exist (the output has sources 1-2)"
    # with no contexts at all, every citation is missing
    with OpenAIChatServer() as server:
        result = score(metric(tmp_path / "b", server), "Apples lower LDL [1].", contexts=[])
        assert server.calls == 0
    assert result.value == 0.0 and "the output has no sources" in result.details["segments"][0]["explanation"]


def test_zero_based_numbering(tmp_path, key):
    with OpenAIChatServer() as server:
        server.default = verdicts({"Apples support digestion": True})
        result = score(metric(tmp_path, server, numbering_base=0), "Apples support digestion [1].")
        assert checked(server.requests[0])["fact"] == CONTEXTS[1]
    assert result.value == 1.0


def test_an_unparseable_reply_is_unscored_with_the_raw_reply(tmp_path, key):
    answer = "Apples lower LDL cholesterol [1]. So they are good."
    with OpenAIChatServer() as server:
        server.default = lambda request: Turn(text="Looks correct to me!")
        result = score(metric(tmp_path, server), answer)
        assert server.calls == 3  # the first reply and two corrective re-asks; round two is not started
    assert isinstance(result, Unscored)
    assert result.reason.startswith("the fact-checker gave no verdict on segment 1 (round 1): ")
    assert result.details["raw"] == "Looks correct to me!"
    assert result.details["segments"][0]["correct"] is None
    assert result.details["segments"][0]["raw"] == "Looks correct to me!"


def test_an_unparseable_reply_in_round_two_is_unscored_too(tmp_path, key):
    def reply(request):
        if checked(request)["text"] == "Apples lower LDL cholesterol":
            return Turn(text=json.dumps({"explanation": "stated", "correct": True}))
        return Turn(text='{"explanation": "no verdict here"}')

    with OpenAIChatServer() as server:
        server.default = reply
        result = score(metric(tmp_path, server), "Apples lower LDL cholesterol [1]. So they are good.")
    assert isinstance(result, Unscored) and "segment 2 (round 2)" in result.reason
    assert result.details["raw"] == '{"explanation": "no verdict here"}'


def test_a_reply_that_recovers_after_a_re_ask_is_used(tmp_path, key):
    with OpenAIChatServer() as server:
        server.script(Turn(text="true, I guess"), Turn(text=json.dumps({"explanation": "stated", "correct": True})))
        result = score(metric(tmp_path, server), "Apples lower LDL cholesterol [1].")
        assert server.calls == 2
    assert result.value == 1.0


def test_round_one_checks_run_concurrently(tmp_path, key):
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def reply(request):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.3)
        with lock:
            state["now"] -= 1
        return Turn(text=json.dumps({"explanation": "ok", "correct": True}))

    answer = "A one [1]. B two [2]. C three [1]. D four [2]."
    with OpenAIChatServer() as server:
        server.default = reply
        assert score(metric(tmp_path, server), answer).value == 1.0
    assert state["most"] == 4


def test_the_lexical_checker_needs_no_model(tmp_path):
    m = metric(tmp_path, lexical_threshold=0.5)
    answer = (
        "Regular apple consumption lowers LDL cholesterol [1]. Apples cure the flu [2].\n\n"
        "Apple consumption lowers cholesterol."
    )
    result = score(m, answer)
    rows = result.details["segments"]
    assert [r["correct"] for r in rows] == [True, False, True]
    assert result.value == pytest.approx(2 / 3) and result.details["checker"] == "lexical"
    assert rows[1]["explanation"].startswith("1 of 3 content words occur in the facts (0.33; threshold 0.50)")
    assert score(metric(tmp_path, lexical_threshold=0.3), answer).value == 1.0
    assert m.options.lexical_threshold == 0.5
    assert metric(tmp_path).options.lexical_threshold == fact_check.DEFAULT_LEXICAL_THRESHOLD


def test_options_are_checked():
    with pytest.raises(ValueError, match="not a valid regular expression"):
        CitationGroundedness.Options(citation_pattern="[1")
    with pytest.raises(ValueError, match="matches the empty string"):
        CitationGroundedness.Options(citation_pattern=r"\d*")
    with pytest.raises(ValueError, match="prompt_version"):
        CitationGroundedness.Options(prompt_version="my-own")
    with pytest.raises(ValueError, match="numbering_base"):
        CitationGroundedness.Options(numbering_base=2)


def _naive_server_reply(request):
    """Answers as a RAG model citing [1] (plus an uncited flourish); fact-checks by word containment."""
    body = request.json
    if "response_format" not in body:
        source = re.search(r"\[1\] ([^.\n]+)", OpenAIChatServer.last_user_text(request)).group(1)
        return Turn(text=f"## Answer\n\n{source} [1].\n\nThis is certain.")
    asked = checked(request)
    supported = set(re.findall(r"\w+", asked["text"].lower())) <= set(re.findall(r"\w+", asked["fact"].lower()))
    return Turn(text=json.dumps({"explanation": f"supported: {supported}", "correct": supported}))


@pytest.mark.slow
def test_stored_details_through_a_real_run_and_show(tmp_path, key):
    with OpenAIChatServer() as server:
        server.default = _naive_server_reply
        gen = {"name": "openai", "options": {"model": "gpt-4o-mini", "base_url": server.url + "/v1"}}
        run = testing.run_project(
            tmp_path,
            {
                "systems": {"naive": {"retriever": "keyword", "generator": gen, "options": {"top_k": 2}}},
                "evaluation": {"metrics": [{"name": "citation_groundedness", "options": {"generator": gen}}]},
            },
            corpus={"alpha.md": "The alpha reactor was built in 1999. It produces steam.\n"},
            samples=[{"question_id": "q1", "question": "When was the alpha reactor built?"}],
        )
        calls = server.calls
    assert run.failed == 0 and run.metric("naive", "q1", "citation_groundedness") == 0.5
    assert calls == 3  # the answer, round one, round two
    shown = ragassay_cli("show", "--config", str(tmp_path), run.summary.run_id, "q1")
    assert shown.returncode == 0, shown.stderr
    flat = " ".join(shown.stdout.split())
    assert "citation_groundedness: 0.5" in flat
    assert "cites: [1]; correct: true; explanation: supported: True; round: 1; text: The alpha reactor was" in flat
    assert "cites: []; correct: false; explanation: supported: False; round: 2; text: This is certain." in flat
    assert "true_segments: 1" in flat and "total_segments: 2" in flat
    # the metric's stored identity: the prompt version and the fact-checker's generator spec
    with sqlite3.connect(tmp_path / "ragassay-results.db") as con:
        spec = json.loads(con.execute("select spec_json from runs").fetchone()[0])["metrics"]["citation_groundedness"]
    assert spec["options"]["prompt_version"] == fact_check.PROMPT_VERSION
    assert spec["components"]["generator"]["name"] == "openai"
    assert spec["components"]["generator"]["options"]["model"] == "gpt-4o-mini"


def test_a_bad_pattern_is_a_config_error_before_any_work(tmp_path):
    from ragassay import ConfigError

    with pytest.raises(ConfigError, match="citation_pattern"):
        testing.run_project(
            tmp_path,
            {
                "systems": {"s": {"retriever": "keyword", "generator": "extractive"}},
                "evaluation": {"metrics": [{"name": "citation_groundedness", "options": {"citation_pattern": "[1"}}]},
            },
            corpus={"a.md": "Apples lower LDL."},
            samples=[{"question_id": "q1", "question": "What do apples lower?"}],
        )
