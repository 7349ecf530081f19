"""The INFO thesis' triad and holistic correctness, judged by the real OpenAI client against a scripted local
server: every score level, partial marks, re-asks that fix a reply, replies still unusable after every re-ask
(unscored with the raw reply), out-of-range scores, and NO inside NOT/KNOWN."""

from __future__ import annotations

import asyncio
import json

import pytest

from ragassay import MetricResult, RAGOutput, Sample, Unscored
from ragassay.components import ComponentContext
from ragassay.plugin_manager import get_plugin_host
from ragassay.plugins.judges.triad import FAITHFULNESS_PROMPT

from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

SAMPLE = Sample(question_id="q", question="Where did the bridge open?", reference_answers=["Zürich"])
OUTPUT = RAGOutput(answer="In Zürich.", contexts=["In 2023 a bridge opened in Zürich.", "Rivers {flow}."])


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-triad")
    with OpenAIChatServer() as server:
        yield server


def metric(server, tmp_path, name, **options):
    generator = {"name": "openai", "options": {"model": "gpt-4o", "base_url": server.url + "/v1", "cache": False}}
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")
    return context.build("metric", {"name": name, "options": {"generator": generator, **options}})


def score(m, sample=SAMPLE, output=OUTPUT):
    return asyncio.run(m.ascore(sample, output))


def reply(**fields):
    return Turn(text=json.dumps(fields))


def schema_of(request):
    return request.json["response_format"]["json_schema"]


@pytest.mark.parametrize("subject, focus, value", [(0, 0, 0.0), (1, 0, 0.5), (0, 1, 0.5), (1, 1, 1.0)])
def test_answer_relevancy_two_binary_questions_scaled(server, tmp_path, subject, focus, value):
    server.script(reply(feedback="On topic.", subject_matter=subject, focus=focus))
    result = score(metric(server, tmp_path, "answer_relevancy"))
    assert isinstance(result, MetricResult) and result.value == value
    assert result.details["subject_matter"] == subject and result.details["explanation"] == "On topic."
    assert result.details["judge"].startswith("answer_relevancy:openai:info-thesis-1:")
    prompt = server.requests[0].json["messages"][-1]["content"]
    assert "1. Does the provided response match the subject matter of the user's query?" in prompt
    assert "2. Does the provided response attempt to address the focus or perspective of the user's query?" in prompt
    assert "Query:\nWhere did the bridge open?" in prompt and "Response:\nIn Zürich." in prompt
    assert list(schema_of(server.requests[0])["schema"]["properties"])[0] == "feedback"  # explanation first


def test_answer_relevancy_out_of_range_point_is_re_asked(server, tmp_path):
    server.script(reply(feedback="x", subject_matter=2, focus=1), reply(feedback="y", subject_matter=1, focus=1))
    assert score(metric(server, tmp_path, "answer_relevancy")).value == 1.0
    assert server.calls == 2 and "subject_matter" in server.requests[1].json["messages"][-1]["content"]


@pytest.mark.parametrize("marks, value", [((0, 0), 0.0), ((0.25, 0), 0.125), ((0.5, 0.25), 0.375), ((1, 1), 1.0)])
def test_context_relevancy_partial_marks(server, tmp_path, marks, value):
    server.script(reply(feedback="Partly.", subject_matter=marks[0], full_answer=marks[1]))
    result = score(metric(server, tmp_path, "context_relevancy"))
    assert result.value == value and result.details["contexts_cut"] is False
    prompt = server.requests[0].json["messages"][-1]["content"]
    assert "2. Can the retrieved context be used exclusively to provide a full answer to the user's query?" in prompt
    assert "Context:\nIn 2023 a bridge opened in Zürich.\n\nRivers {flow}." in prompt


def test_context_relevancy_mark_off_the_quarter_grid_is_re_asked_then_unscored(server, tmp_path):
    bad = '{"feedback": "meh", "subject_matter": 0.3, "full_answer": 1}'
    server.default = lambda r: Turn(text=bad)
    result = score(metric(server, tmp_path, "context_relevancy"))
    assert isinstance(result, Unscored) and result.reason.startswith("judge reply not usable")
    assert "0, 0.25, 0.5, 0.75 or 1" in result.reason and result.details["raw"] == bad
    assert server.calls == 3  # the first reply and two corrective re-asks


def test_context_metrics_are_unscored_without_contexts(server, tmp_path):
    for name in ("context_relevancy", "faithfulness"):
        m = metric(server, tmp_path, name)
        assert score(m, output=RAGOutput(answer="a")) == Unscored(reason="no retrieved contexts to judge")
        skipped = score(m, output=RAGOutput(answer="a", retrieved=False))
        assert skipped == Unscored(reason="system did not retrieve (retrieved=False)")
    assert server.calls == 0


@pytest.mark.parametrize("answer, value", [("YES", 1.0), ("no", 0.0), ("**Yes.**", 1.0)])
def test_faithfulness_structured_verdicts(server, tmp_path, answer, value):
    server.script(reply(explanation="The first context says so.", answer=answer))
    result = score(metric(server, tmp_path, "faithfulness"))
    assert result.value == value and result.details["verdict"] == ("YES" if value else "NO")
    content = server.requests[0].json["messages"][-1]["content"]
    context = "In 2023 a bridge opened in Zürich.\n\nRivers {flow}."
    assert content == FAITHFULNESS_PROMPT.replace("{query_str}", "In Zürich.").replace("{context_str}", context)
    assert content.startswith("Please tell if a given piece of information is supported by the context.\n")
    assert list(schema_of(server.requests[0])["schema"]["properties"]) == ["explanation", "answer"]


def test_faithfulness_no_inside_not_known_is_no_verdict_then_fixed_on_re_ask(server, tmp_path):
    server.script(reply(explanation="Unclear.", answer="NOT KNOWN"), reply(explanation="Supported.", answer="YES"))
    assert score(metric(server, tmp_path, "faithfulness")).value == 1.0
    assert server.calls == 2 and "NOT KNOWN" in server.requests[1].json["messages"][-1]["content"]


def test_faithfulness_unparseable_after_all_re_asks_is_unscored_with_raw(server, tmp_path):
    server.default = lambda r: Turn(text="I cannot tell.")
    result = score(metric(server, tmp_path, "faithfulness"))
    assert isinstance(result, Unscored) and result.details["raw"] == "I cannot tell."
    assert "gave up after 3 replies" in result.reason and server.calls == 3


def test_faithfulness_text_reply_whole_word_verdict(server, tmp_path):
    server.script(Turn(text="NOT KNOWN"), Turn(text="NOTED. YES, the context is KNOWN to say so; no doubt."))
    m = metric(server, tmp_path, "faithfulness", reply="text")
    result = score(m)
    assert result.value == 1.0 and result.details["verdict"] == "YES"  # the first whole-word verdict decides
    assert server.calls == 2 and "Answer with one of: yes, no" in server.requests[1].json["messages"][-1]["content"]
    assert "response_format" not in server.requests[0].json
    server.default = lambda r: Turn(text="It is not known; nothing is knowable.")
    unscored = score(m)
    assert isinstance(unscored, Unscored) and unscored.details["raw"] == "It is not known; nothing is knowable."
    assert server.calls == 5 and m.identity != metric(server, tmp_path, "faithfulness").identity


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_holistic_correctness_each_level(server, tmp_path, level):
    server.script(reply(explanation="Compared with the reference.", score=level))
    result = score(metric(server, tmp_path, "holistic_correctness"))
    assert result.value == float(level)
    prompt = server.requests[0].json["messages"][-1]["content"]
    assert "Intermediate scores (2-3) are given for responses that are relevant but contain factual" in prompt
    assert "Reference answer:\nZürich" in prompt and "Generated answer:\nIn Zürich." in prompt


def test_holistic_correctness_out_of_range_then_unscored_with_raw(server, tmp_path):
    server.script(reply(explanation="Great.", score=6), reply(explanation="Good.", score=4))
    m = metric(server, tmp_path, "holistic_correctness")
    assert score(m).value == 4.0 and server.calls == 2
    server.default = lambda r: reply(explanation="Perfect!", score=10)
    result = score(m)
    assert isinstance(result, Unscored) and json.loads(result.details["raw"])["score"] == 10
    assert "less than or equal to 5" in result.reason
    assert score(m, sample=Sample(question_id="x", question="?")) == Unscored(reason="sample has no reference_answers")


def test_prompt_version_is_checked_and_the_generator_is_required(tmp_path):
    from pydantic import ValidationError

    from ragassay.plugins.judges.triad import AnswerRelevancy

    with pytest.raises(ValidationError, match="generator"):
        AnswerRelevancy.Options()
    with pytest.raises(ValidationError, match="info-thesis-1"):
        AnswerRelevancy.Options(generator="openai", prompt_version="v9")
    assert AnswerRelevancy.Options(generator="openai").prompt_version == "info-thesis-1"
