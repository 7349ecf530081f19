"""Truthfulness and relevance (1-5) from a forced evaluation tool call; both from one model call."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.components import ComponentContext
from ragassay.models import RAGOutput, Sample, Unscored

from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

SAMPLE = Sample(
    question_id="q", question="Where did the bridge open?", reference_contexts=["In 2023 a bridge opened in Zürich."]
)
OUTPUT = RAGOutput(answer="In Zürich.")


def test_one_call_scores_both_aspects(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    with OpenAIChatServer() as server:
        server.default = lambda r: Turn(
            text=None, tool_calls=[("set_answer_evaluation", {"truthfulness": 4, "relevance": 5})]
        )
        context = ComponentContext(project_dir=tmp_path, cache_dir=tmp_path / "cache")
        generator = {"name": "openai", "options": {"model": "gpt-4o", "base_url": server.url + "/v1"}}
        truth = context.build("metric", {"name": "truthfulness", "options": {"generator": generator}})
        relevance = context.build("metric", {"name": "relevance", "options": {"generator": generator}})

        async def score():
            return await truth.ascore(SAMPLE, OUTPUT), await relevance.ascore(SAMPLE, OUTPUT)

        assert asyncio.run(score()) == (4.0, 5.0)
        assert server.calls == 1  # the second metric's identical request is a cache hit
        request = server.requests[0].json
        assert request["messages"][0]["content"].startswith("Your task is to evaluate answers given by a chatbot.")
        assert "Article:\nIn 2023 a bridge opened in Zürich." in request["messages"][1]["content"]
        assert request["tool_choice"]["function"]["name"] == "set_answer_evaluation"
        assert asyncio.run(truth.ascore(Sample(question_id="x", question="?"), OUTPUT)) == Unscored(
            reason="sample has no reference_contexts (the article the evaluator checks against)"
        )


def test_a_generator_that_does_not_declare_chat_is_refused_by_name(tmp_path):
    from ragassay import ConfigError, GeneratorRef
    from ragassay.plugins.truthfulness import Truthfulness

    assert type(Truthfulness.Options(generator="openai").generator) is GeneratorRef  # typed: resolved when planned
    metric = ComponentContext(project_dir=tmp_path).build(
        "metric", {"name": "truthfulness", "options": {"generator": "extractive"}}
    )
    sample = Sample(question_id="q", question="?", reference_contexts=["an article"])
    with pytest.raises(ConfigError, match="metric truthfulness: generator 'extractive' does not support chat.*openai"):
        asyncio.run(metric.ascore(sample, RAGOutput(answer="a")))
