"""The fact-checkers: the blog's LLM fact-checker (prompt verbatim, the blog's message shape) and the offline
lexical checker."""

from __future__ import annotations

import asyncio
import json

import pytest

from ragassay.components import ComponentContext
from ragassay.plugin_manager import get_plugin_host
from ragassay.plugins.judges.fact_check import FACT_CHECK_PROMPT, LexicalFactChecker, LLMFactChecker

from servers.openai_chat import OpenAIChatServer, Turn

APPLE_FACT = "A 2019 clinical study found that regular apple consumption was associated with lower LDL cholesterol."


def test_lexical_checker_counts_content_words():
    checker = LexicalFactChecker(threshold=0.5)
    grounded = checker.check_now("Apple consumption was associated with lower cholesterol.", [APPLE_FACT])
    assert grounded.correct is True and "5 of 5 content words" in grounded.explanation
    leap = checker.check_now("Eating apples can reduce blood pressure", [APPLE_FACT])
    assert leap.correct is False and "blood" in leap.explanation
    assert checker.check_now("It is what it is.", [APPLE_FACT]).correct is None  # no content words: no verdict


def test_llm_checker_sends_the_blogs_prompt_and_message(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIChatServer() as server:
        server.default = lambda r: Turn(text=json.dumps({"explanation": "cholesterol, not pressure", "correct": False}))
        context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "c")
        generator = context.build("generator", {"name": "openai", "options": {"base_url": server.url + "/v1"}})
        result = asyncio.run(
            LLMFactChecker(generator).check("1. Eating apples can reduce blood pressure", [APPLE_FACT])
        )
        assert result.correct is False and result.explanation == "cholesterol, not pressure"
        messages = server.requests[0].json["messages"]
        assert messages[0] == {"role": "system", "content": FACT_CHECK_PROMPT}
        assert json.loads(messages[1]["content"]) == {
            "text": "1. Eating apples can reduce blood pressure",
            "fact": APPLE_FACT,
        }
        assert server.requests[0].json["temperature"] == 0.0
