"""Truthfulness and relevance (1-5) from one structured reply (explanation first): the paper's forced function
call with structured_mode="tool", response_format otherwise; both from one model call; bad replies unscored."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.components import ComponentContext
from ragassay.models import RAGOutput, Sample, Unscored
from ragassay.plugin_manager import get_plugin_host

from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")


def evaluator_context(tmp_path, **kwargs) -> ComponentContext:
    return ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, **kwargs)


SAMPLE = Sample(
    question_id="q", question="Where did the bridge open?", reference_contexts=["In 2023 a bridge opened in Zürich."]
)
OUTPUT = RAGOutput(answer="In Zürich.")


def test_one_call_scores_both_aspects(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    with OpenAIChatServer() as server:
        server.default = lambda r: Turn(
            text=None,
            tool_calls=[("set_answer_evaluation", {"explanation": "Right city.", "truthfulness": 4, "relevance": 5})],
        )
        context = evaluator_context(tmp_path, cache_dir=tmp_path / "cache")
        options = {"model": "gpt-4o", "base_url": server.url + "/v1", "structured_mode": "tool"}
        generator = {"name": "openai", "options": options}
        truth = context.build("metric", {"name": "truthfulness", "options": {"generator": generator}})
        relevance = context.build("metric", {"name": "relevance", "options": {"generator": generator}})

        async def score():
            return await truth.ascore(SAMPLE, OUTPUT), await relevance.ascore(SAMPLE, OUTPUT)

        truth_value, relevance_value = asyncio.run(score())
        assert (truth_value.value, relevance_value.value) == (4.0, 5.0)
        judge = truth_value.details.pop("judge")  # the judge base's identity: name, generator, protocol, digest
        assert truth_value.details == {"explanation": "Right city.", "truthfulness": 4, "relevance": 5}
        assert judge.startswith("truthfulness:openai:seeds003-1:") and judge == truth.identity
        assert relevance_value.details["judge"].startswith("relevance:openai:seeds003-1:")
        assert server.calls == 1  # the second metric's identical request is a cache hit
        request = server.requests[0].json
        assert request["temperature"] == 0.0  # the judge base's default params: greedy
        assert request["messages"][0]["content"].startswith("Your task is to evaluate answers given by a chatbot.")
        assert "Article:\nIn 2023 a bridge opened in Zürich." in request["messages"][1]["content"]
        assert request["tool_choice"]["function"]["name"] == "set_answer_evaluation"
        tool = request["tools"][0]["function"]["parameters"]
        assert list(tool["properties"]) == ["explanation", "truthfulness", "relevance"]
        assert asyncio.run(truth.ascore(Sample(question_id="x", question="?"), OUTPUT)) == Unscored(
            reason="sample has no reference_contexts (the article the evaluator checks against)"
        )


def test_a_generator_that_does_not_declare_chat_is_refused_by_name(tmp_path):
    from ragassay import ConfigError, GeneratorRef
    from ragassay.plugins.truthfulness import Truthfulness

    assert type(Truthfulness.Options(generator="openai").generator) is GeneratorRef  # typed: resolved when planned
    metric = evaluator_context(tmp_path).build(
        "metric", {"name": "truthfulness", "options": {"generator": "extractive"}}
    )
    sample = Sample(question_id="q", question="?", reference_contexts=["an article"])
    with pytest.raises(ConfigError, match="metric truthfulness: generator 'extractive' does not support chat.*openai"):
        asyncio.run(metric.ascore(sample, RAGOutput(answer="a")))


def test_response_format_by_default_and_an_out_of_range_score_is_re_asked_then_unscored(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    bad = '{"explanation": "Great.", "truthfulness": 7, "relevance": 5}'
    with OpenAIChatServer() as server:
        server.script(Turn(text=bad), Turn(text='{"explanation": "Fine.", "truthfulness": 3, "relevance": 2}'))
        context = evaluator_context(tmp_path, cache_dir=tmp_path / "cache")
        generator = {"name": "openai", "options": {"model": "gpt-4o", "base_url": server.url + "/v1", "cache": False}}
        truth = context.build("metric", {"name": "truthfulness", "options": {"generator": generator}})
        value = asyncio.run(truth.ascore(SAMPLE, OUTPUT))
        assert value.value == 3.0 and server.calls == 2  # re-asked once with the validation error
        assert "truthfulness" in server.requests[1].json["messages"][-1]["content"]
        assert server.requests[0].json["response_format"]["json_schema"]["name"] == "set_answer_evaluation"
        server.default = lambda r: Turn(text=bad)
        unscored = asyncio.run(truth.ascore(SAMPLE, OUTPUT))
        assert isinstance(unscored, Unscored) and unscored.reason.startswith("evaluator reply not usable")
        assert unscored.details["raw"] == bad and server.calls == 5  # 1 + 2 re-asks
        assert "less than or equal to 5" in unscored.details["error"] and unscored.details["judge"] == truth.identity
