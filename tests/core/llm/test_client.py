"""LLMClient: cache hits make no call, identical concurrent calls are made once, structured output and
forced tool calls are re-asked with the error, accounting per backend/model with cost."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from ragassay.errors import ProviderError
from ragassay.llm.backend import LLMBackend
from ragassay.llm.cache import ResponseCache
from ragassay.llm.client import LLMClient
from ragassay.llm.retry import RetryableError, RetryPolicy
from ragassay.llm.types import LLMResponse, ToolCall
from ragassay.models import TokenUsage


class ScriptedBackend(LLMBackend):
    """Replies from a list (LLMResponse or exception); afterwards echoes the last message."""

    name = "scripted"

    def __init__(self, *replies, delay_s=0.0):
        super().__init__("gpt-4o-mini")
        self.replies = list(replies)
        self.requests = []
        self.delay_s = delay_s

    def retry_policy(self):
        return RetryPolicy(max_retries=2, backoff_s=0.001, timeout_s=60)

    async def complete(self, request):
        self.requests.append(request)
        await asyncio.sleep(self.delay_s)
        reply = self.replies.pop(0) if self.replies else LLMResponse(text=f"echo {request.messages[-1].content}")
        if isinstance(reply, Exception):
            raise reply
        return reply.model_copy(update={"usage": TokenUsage(input_tokens=100, output_tokens=10, cached_tokens=40)})


class Verdict(BaseModel):
    correct: bool


@pytest.fixture
def cache(tmp_path):
    cache = ResponseCache(f"sqlite:///{tmp_path}/llm-cache.db")
    yield cache
    cache.close()


def test_usage_is_accounted_per_model_and_priced():
    client = LLMClient(ScriptedBackend())
    response = asyncio.run(client.chat([{"role": "user", "content": "hi"}]))
    assert response.text == "echo hi" and not response.cached
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.calls) == (100, 10, 40, 1)
    assert list(usage.by_model) == ["scripted/gpt-4o-mini"]
    assert response.cost_usd == pytest.approx((60 * 0.15 + 40 * 0.075 + 10 * 0.60) / 1e6)


def test_a_cached_response_makes_no_call_and_keeps_its_tokens(cache):
    backend = ScriptedBackend()
    client = LLMClient(backend, cache=cache)
    first = asyncio.run(client.chat([{"role": "user", "content": "hi"}]))
    second = asyncio.run(client.chat([{"role": "user", "content": "hi"}]))
    assert len(backend.requests) == 1 and second.cached and second.text == first.text
    assert (second.usage.calls, second.usage.cache_hits, second.usage.input_tokens) == (0, 1, 100)
    assert client.stats.calls == 1 and client.stats.cache_hits == 1


def test_identical_concurrent_calls_are_made_once(cache):
    backend = ScriptedBackend(delay_s=0.05)
    client = LLMClient(backend, cache=cache)

    async def main():
        return await asyncio.gather(*(client.chat([{"role": "user", "content": "same"}]) for _ in range(5)))

    responses = asyncio.run(main())
    assert len(backend.requests) == 1 and sum(r.cached for r in responses) == 4


def test_stochastic_samples_are_separate_entries(cache):
    backend = ScriptedBackend()
    client = LLMClient(backend, cache=cache)

    async def main():
        for index in (0, 1, 2, 0, 1, 2):
            await client.chat([{"role": "user", "content": "x"}], params={"temperature": 0.8}, sample_index=index)

    asyncio.run(main())
    assert len(backend.requests) == 3 and client.stats.cache_hits == 3


def test_transient_errors_are_retried_and_counted():
    backend = ScriptedBackend(RetryableError("HTTP 500"), LLMResponse(text="fine"))
    client = LLMClient(backend)
    assert asyncio.run(client.chat([{"role": "user", "content": "x"}])).text == "fine"
    assert client.stats.calls == 2 and client.stats.retries == 1


def test_failures_are_provider_errors_and_not_cached(cache):
    backend = ScriptedBackend(*[RetryableError("HTTP 503")] * 3)
    client = LLMClient(backend, cache=cache)
    with pytest.raises(ProviderError, match="scripted gpt-4o-mini: HTTP 503; gave up after 3 attempts"):
        asyncio.run(client.chat([{"role": "user", "content": "x"}]))
    assert client.stats.failures == 1 and client.stats.calls == 3
    assert asyncio.run(client.chat([{"role": "user", "content": "x"}])).text == "echo x"


def test_unexpected_backend_errors_become_scrubbed_provider_errors():
    client = LLMClient(ScriptedBackend(KeyError("sk-test-PLANTED-123456789")))
    with pytest.raises(ProviderError, match="KeyError") as info:
        asyncio.run(client.chat([{"role": "user", "content": "x"}]))
    assert "PLANTED-123456789" not in str(info.value)


def test_invalid_structured_output_is_re_asked_with_the_error():
    backend = ScriptedBackend(LLMResponse(text="yes it is"), LLMResponse(text='{"correct": true}'))
    response = asyncio.run(LLMClient(backend).chat([{"role": "user", "content": "judge"}], response_model=Verdict))
    assert response.parsed == Verdict(correct=True) and response.usage.calls == 2
    assert response.usage.input_tokens == 200
    retry = backend.requests[1].messages
    assert retry[-2].content == "yes it is" and "no valid JSON" in retry[-1].content
    assert backend.requests[0].response_schema["title"] == "Verdict"


def test_structured_output_gives_up_after_the_bounded_retries():
    backend = ScriptedBackend(*[LLMResponse(text="nope")] * 5)
    with pytest.raises(ProviderError, match="no valid JSON object; gave up after 2 replies"):
        asyncio.run(
            LLMClient(backend, structured_retries=1).chat([{"role": "user", "content": "j"}], response_model=Verdict)
        )
    assert len(backend.requests) == 2


def test_a_forced_tool_call_is_enforced():
    call = ToolCall(id="c", name="Verdict", arguments={"correct": False})
    backend = ScriptedBackend(LLMResponse(text="I won't"), LLMResponse(tool_calls=[call]))
    response = asyncio.run(
        LLMClient(backend).chat([{"role": "user", "content": "x"}], tools=[Verdict], tool_choice="Verdict")
    )
    assert response.tool_call("Verdict").arguments == {"correct": False}
    assert "must call the tool 'Verdict'" in backend.requests[1].messages[-1].content
