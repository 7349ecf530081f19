"""The openai generator's reasoning_effort against a local chat-completions server, through the real openai
client: the option on the wire (and what it leaves out), reasoning tokens read apart (plain and streamed), priced
apart, and part of the cache key."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.components import ComponentContext, GenerationRequest
from ragassay.llm.cache import close_caches
from ragassay.llm.pricing import PriceTable
from ragassay.llm.settings import LLMSection, ModelPrice, runtime_settings
from ragassay.plugins.openai_llm import OpenAIGenerator
from tests.servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")


@pytest.fixture(scope="module")
def shared_server():
    with OpenAIChatServer() as server:
        yield server


@pytest.fixture
def server(shared_server):
    return shared_server.reset()


@pytest.fixture
def make(tmp_path, server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-reasoning")
    context = ComponentContext(
        project_dir=tmp_path,
        cache_dir=tmp_path / "cache",
        settings={"llm": runtime_settings(LLMSection(), tmp_path / "cache")},
    )

    def make(**options):
        defaults = {"base_url": server.url + "/v1", "backoff_s": 0.01, "timeout_s": 5.0, "max_retries": 1}
        return OpenAIGenerator(OpenAIGenerator.Options(**{**defaults, **options}), context=context)

    yield make
    close_caches()


def ask(generator, text="Is the answer supported?", **params):
    request = GenerationRequest(question=text, messages=[{"role": "user", "content": text}], params=params)
    return asyncio.run(generator.generate(request))


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_effort_reaches_the_wire_and_reasoning_tokens_come_back_apart(make, server, stream):
    server.script(Turn(text="yes", usage=(200, 90, 0), reasoning_tokens=64))
    generation = ask(make(model="o3-mini", reasoning_effort="low", stream=stream), max_tokens=300)
    body = server.requests[0].json
    assert body["reasoning_effort"] == "low"
    assert "temperature" not in body and "top_p" not in body  # reasoning models accept only their defaults
    assert body["max_completion_tokens"] == 300 and "max_tokens" not in body
    usage = generation.usage
    assert (usage.output_tokens, usage.reasoning_tokens) == (90, 64)
    assert usage.by_model["openai/o3-mini"].reasoning_tokens == 64


def test_without_reasoning_effort_nothing_changes_on_the_wire(make, server):
    server.script(Turn(text="yes", usage=(10, 3, 0)))
    generation = ask(make(model="gpt-4o-mini"), max_tokens=50)
    body = server.requests[0].json
    assert "reasoning_effort" not in body and body["temperature"] == 0.0 and body["max_tokens"] == 50
    assert generation.usage.reasoning_tokens == 0


def test_reasoning_effort_is_part_of_the_cache_key(make, server):
    server.script(Turn(text="a", reasoning_tokens=5), Turn(text="b", reasoning_tokens=7), Turn(text="c"))
    low, high = make(model="o3-mini", reasoning_effort="low"), make(model="o3-mini", reasoning_effort="high")
    assert ask(low).text == "a" and ask(high).text == "b"
    again = ask(low)
    assert again.text == "a" and again.usage.cache_hits == 1 and again.usage.reasoning_tokens == 5
    assert server.calls == 2
    assert low.make_backend().identity() != high.make_backend().identity()
    assert "reasoning_effort" not in make(model="o3-mini").make_backend().identity()


def test_reasoning_is_priced_apart_and_defaults_to_the_output_price():
    from ragassay.models import TokenUsage

    usage = TokenUsage(input_tokens=1_000_000, output_tokens=1_000_000, reasoning_tokens=400_000)
    plain = PriceTable({"r": ModelPrice(input_per_million=1.0, output_per_million=4.0)})
    apart = PriceTable({"r": ModelPrice(input_per_million=1.0, output_per_million=4.0, reasoning_per_million=10.0)})
    assert plain.cost(usage, "openai/r") == pytest.approx(1.0 + 4.0)
    assert apart.cost(usage, "openai/r") == pytest.approx(1.0 + 0.6 * 4.0 + 0.4 * 10.0)
