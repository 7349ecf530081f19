"""The anthropic generator's extended thinking against a local messages-API server, through the real anthropic
client: the thinking budget on the wire (added to max_tokens, no temperature, no forced tool), a thinking block in
the reply left out of the text, and the budget part of the cache key."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from ragassay.components import ComponentContext, GenerationRequest
from ragassay.llm.cache import close_caches
from ragassay.llm.settings import LLMSection, runtime_settings
from ragassay.plugin_manager import get_plugin_host
from ragassay.plugins.anthropic_llm import AnthropicGenerator
from tests.servers.anthropic_messages import AnthropicMessagesServer, Turn
from tests.servers.base import Reply

pytest.importorskip("anthropic")


class Grade(BaseModel):
    score: int
    why: str


@pytest.fixture(scope="module")
def shared_server():
    with AnthropicMessagesServer() as server:
        yield server


@pytest.fixture
def server(shared_server):
    return shared_server.reset()


@pytest.fixture
def make(tmp_path, server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-thinking")
    context = ComponentContext(
        registry=get_plugin_host().registry,
        project_dir=tmp_path,
        cache_dir=tmp_path / "cache",
        settings={"llm": runtime_settings(LLMSection(), tmp_path / "cache")},
    )

    def make(**options):
        defaults = {"base_url": server.url, "backoff_s": 0.01, "timeout_s": 5.0, "max_retries": 1}
        return AnthropicGenerator(AnthropicGenerator.Options(**{**defaults, **options}), context=context)

    yield make
    close_caches()


def _thinking_reply(request):
    """A message whose first block is the model's thinking, then the answer."""
    content = [
        {"type": "thinking", "thinking": "The context says so.", "signature": "sig"},
        {"type": "text", "text": "supported"},
    ]
    body = {
        "id": "msg_t",
        "type": "message",
        "role": "assistant",
        "model": request.json["model"],
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 40, "output_tokens": 300},
    }
    return Reply(200, body)


def test_thinking_budget_reaches_the_wire_and_the_thinking_stays_out_of_the_text(make, server):
    server.script(_thinking_reply)
    generator = make(model="claude-sonnet-4-5", thinking_budget_tokens=2048)
    request = GenerationRequest(
        question="q", messages=[{"role": "user", "content": "Supported?"}], params={"max_tokens": 100}
    )
    generation = asyncio.run(generator.generate(request))
    body = server.requests[0].json
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 2148 and "temperature" not in body and "top_p" not in body
    assert generation.text == "supported"
    # Anthropic reports thinking inside output_tokens only: no separate count to store
    assert (generation.usage.output_tokens, generation.usage.reasoning_tokens) == (300, 0)


def test_structured_output_with_thinking_does_not_force_the_tool(make, server):
    server.script(Turn(tool_calls=[("Grade", {"score": 4, "why": "close"})]))
    generator = make(model="claude-sonnet-4-5", thinking_budget_tokens=1024)
    reply = asyncio.run(generator.chat([{"role": "user", "content": "Grade it."}], response_model=Grade))
    assert reply.parsed == Grade(score=4, why="close")
    assert server.requests[0].json["tool_choice"] == {"type": "auto"}


def test_without_thinking_nothing_changes_and_the_budget_is_in_the_cache_key(make, server):
    server.script(Turn(text="a"), Turn(text="b"))
    plain, thinking = make(model="claude-haiku-4-5"), make(model="claude-haiku-4-5", thinking_budget_tokens=1024)
    request = GenerationRequest(question="q", messages=[{"role": "user", "content": "Hi"}])
    assert asyncio.run(plain.generate(request)).text == "a"
    assert asyncio.run(thinking.generate(request)).text == "b"
    first = server.requests[0].json
    assert "thinking" not in first and first["temperature"] == 0.0 and first["max_tokens"] == 1024
    assert asyncio.run(plain.generate(request)).usage.cache_hits == 1 and server.calls == 2
    assert "thinking_budget_tokens" not in plain.make_backend().identity()
