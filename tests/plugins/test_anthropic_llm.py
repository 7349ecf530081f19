"""The anthropic generator against a local messages-API server, through the real anthropic client library:
system prompt, tool use (forced too), structured output via a tool, streaming, usage, and every fault type."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel

from ragassay.components import ComponentContext, GenerationRequest
from ragassay.errors import ProviderError
from ragassay.llm.cache import close_caches
from ragassay.llm.settings import LLMSection, runtime_settings
from ragassay.plugin_manager import get_plugin_host
from ragassay.plugins.anthropic_llm import AnthropicGenerator
from tests.servers.anthropic_messages import (
    AnthropicMessagesServer,
    Turn,
    malformed,
    rate_limited,
    server_error,
    stalled,
    truncated_stream,
)
from tests.servers.base import Reply

pytest.importorskip("anthropic")
PLANTED = "sk-ant-test-PLANTED-7c9e01"


class Retrieve(BaseModel):
    """Search the corpus."""

    query: str


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
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED)
    context = ComponentContext(
        registry=get_plugin_host().registry,
        project_dir=tmp_path,
        cache_dir=tmp_path / "cache",
        settings={"llm": runtime_settings(LLMSection(), tmp_path / "cache")},
    )

    def make(**options):
        defaults = {"base_url": server.url, "backoff_s": 0.01, "timeout_s": 2.0, "max_retries": 2}
        return AnthropicGenerator(AnthropicGenerator.Options(**{**defaults, **options}), context=context)

    yield make
    close_caches()


def sent_key(request):
    """The key as sent (SDK versions differ: x-api-key or a bearer token)."""
    return request.headers.get("x-api-key") or request.headers["authorization"].removeprefix("Bearer ")


def ask(generator, text="What is BM25?"):
    request = GenerationRequest(
        question=text, messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}]
    )
    return asyncio.run(generator.generate(request))


def test_messages_api_request_and_usage(make, server):
    server.script(Turn(text="A ranking function.", usage=(300, 8, 200)))
    generation = ask(make(max_tokens=99, temperature=0.5, stop=["END"]))
    sent = server.requests[0]
    assert sent.json["system"] == "Be brief." and sent.json["max_tokens"] == 99
    assert sent.json["messages"] == [{"role": "user", "content": [{"type": "text", "text": "What is BM25?"}]}]
    assert sent.json["temperature"] == 0.5 and sent.json["stop_sequences"] == ["END"]
    assert sent_key(sent) == PLANTED
    usage = generation.usage
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens, usage.calls) == (300, 200, 8, 1)
    assert generation.raw["finish_reason"] == "end_turn"
    assert generation.raw["cost_usd"] == pytest.approx((100 * 1.0 + 200 * 0.1 + 8 * 5.0) / 1e6)


def test_cache_hit_on_repeat(make, server):
    generator = make()
    ask(generator)
    assert ask(generator).raw["cached"] is True and server.calls == 1


def test_tool_use_auto_forced_and_results(make, server):
    generator = make()
    server.script(Turn(text="Let me search.", tool_calls=[("Retrieve", {"query": "bm25"})]))
    reply = asyncio.run(generator.chat([{"role": "user", "content": "q"}], tools=[Retrieve], tool_choice="auto"))
    assert reply.text == "Let me search." and reply.tool_call("Retrieve").arguments == {"query": "bm25"}
    sent = server.requests[-1].json
    assert sent["tools"][0]["input_schema"]["required"] == ["query"] and sent["tool_choice"] == {"type": "auto"}

    server.script(Turn(text=None, tool_calls=[("Retrieve", {"query": "x"})]))
    history = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "toolu_0", "name": "Retrieve", "arguments": {"query": "x"}}],
        },
        {"role": "tool", "tool_call_id": "toolu_0", "content": "doc"},
    ]
    asyncio.run(generator.chat(history, tools=[Retrieve], tool_choice="Retrieve"))
    sent = server.requests[-1].json
    assert sent["tool_choice"] == {"type": "tool", "name": "Retrieve"}
    assert sent["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_0", "name": "Retrieve", "input": {"query": "x"}}
    ]
    assert sent["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_0", "content": "doc"}]


def test_structured_output_through_a_forced_tool(make, server):
    server.script(Turn(text=None, tool_calls=[("Grade", {"score": 4, "why": "relevant"})]))
    reply = asyncio.run(make().chat([{"role": "user", "content": "grade"}], response_model=Grade))
    assert reply.parsed == Grade(score=4, why="relevant") and reply.tool_calls == []
    sent = server.requests[-1].json
    assert sent["tool_choice"] == {"type": "tool", "name": "Grade"} and sent["tools"][0]["name"] == "Grade"


def test_streaming_events_are_accumulated(make, server):
    generator = make(stream=True)
    server.script(Turn(text="streamed reply", usage=(40, 3, 10)))
    generation = ask(generator)
    assert generation.text == "streamed reply" and generation.usage.input_tokens == 40
    assert generation.usage.output_tokens == 3 and generation.usage.cached_tokens == 10
    server.script(Turn(text=None, tool_calls=[("Grade", {"score": 2, "why": "w"})]))
    assert asyncio.run(generator.chat([{"role": "user", "content": "g"}], response_model=Grade)).parsed.score == 2


def test_429_with_retry_after_then_529_overloaded(make, server):
    server.script(rate_limited(0.3, "anthropic"), server_error(529, "anthropic"), Turn(text="ok now"))
    start = time.perf_counter()
    assert ask(make()).text == "ok now" and server.calls == 3
    assert time.perf_counter() - start >= 0.28


def test_timeouts_malformed_and_truncated_replies_are_retried_then_fail(make, server):
    server.script(stalled(2.0), stalled(2.0))
    with pytest.raises(ProviderError, match=r"timeout\); gave up after 2 attempts"):
        ask(make(timeout_s=0.3, max_retries=1), "stall")
    server.script(malformed(), malformed())
    with pytest.raises(ProviderError, match="malformed response"):
        ask(make(max_retries=1), "malformed")
    server.script(truncated_stream(), Turn(text="whole"))
    assert ask(make(stream=True), "truncated").text == "whole"
    server.script(truncated_stream(), truncated_stream())
    with pytest.raises(ProviderError, match="truncated stream"):
        ask(make(stream=True, max_retries=1), "truncated twice")
    assert server.calls == 8


def test_authentication_errors_are_not_retried_and_carry_no_key(make, server):
    server.script(
        lambda request: Reply(
            401,
            {
                "type": "error",
                "error": {"type": "authentication_error", "message": f"invalid x-api-key {sent_key(request)}"},
            },
        )
    )
    with pytest.raises(ProviderError, match="HTTP 401") as info:
        ask(make())
    assert server.calls == 1 and "PLANTED" not in str(info.value)
