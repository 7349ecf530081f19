"""The openai generator against a local chat-completions server, through the real openai client library:
requests on the wire, tool calls, structured output, streaming, Azure, caching, and every fault type."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from pydantic import BaseModel

from ragassay.components import ComponentContext, GenerationRequest
from ragassay.errors import ProviderError
from ragassay.llm.cache import close_caches
from ragassay.llm.settings import LLMSection, runtime_settings
from ragassay.plugins.openai_llm import OpenAIGenerator
from tests.servers.base import Reply
from tests.servers.openai_chat import (
    OpenAIChatServer,
    Turn,
    malformed,
    rate_limited,
    server_error,
    stalled,
    truncated_stream,
)

pytest.importorskip("openai")
PLANTED = "sk-test-PLANTED-openai-4f1d2c"


class Retrieve(BaseModel):
    """Search the corpus."""

    query: str


class Verdict(BaseModel):
    correct: bool
    reason: str


@pytest.fixture(scope="module")
def shared_server():
    with OpenAIChatServer() as server:
        yield server


@pytest.fixture
def server(shared_server):
    """The module's server with an empty script and no recorded requests."""
    return shared_server.reset()


@pytest.fixture
def make(tmp_path, server, monkeypatch):
    """Build an openai generator pointed at the local server, with fast retry settings."""
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    context = ComponentContext(
        project_dir=tmp_path,
        cache_dir=tmp_path / "cache",
        settings={"llm": runtime_settings(LLMSection(), tmp_path / "cache")},
    )

    def make(**options):
        defaults = {"base_url": server.url + "/v1", "backoff_s": 0.01, "timeout_s": 2.0, "max_retries": 2}
        return OpenAIGenerator(OpenAIGenerator.Options(**{**defaults, **options}), context=context)

    yield make
    close_caches()


def ask(generator, text="What is BM25?", **params):
    request = GenerationRequest(
        question=text,
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}],
        params=params,
    )
    return asyncio.run(generator.generate(request))


def test_generate_sends_messages_and_decoding_and_reads_usage(make, server):
    server.script(Turn(text="A ranking function.", usage=(120, 6, 100), model="gpt-4o-mini-2024-07-18"))
    generation = ask(make(seed=7, max_tokens=64, temperature=0.2))
    sent = server.requests[0]
    assert sent.json["messages"][0] == {"role": "system", "content": "Be brief."}
    assert (sent.json["model"], sent.json["seed"], sent.json["max_tokens"], sent.json["temperature"]) == (
        "gpt-4o-mini",
        7,
        64,
        0.2,
    )
    assert sent.headers["authorization"] == f"Bearer {PLANTED}"
    assert generation.text == "A ranking function."
    usage = generation.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.calls) == (120, 6, 100, 1)
    assert list(usage.by_model) == ["openai/gpt-4o-mini-2024-07-18"]
    assert generation.raw["finish_reason"] == "stop" and generation.raw["cost_usd"] == pytest.approx(
        (20 * 0.15 + 100 * 0.075 + 6 * 0.6) / 1e6
    )


def test_a_repeated_call_is_served_from_the_cache(make, server):
    generator = make()
    first, second = ask(generator), ask(generator)
    assert server.calls == 1 and second.text == first.text and second.raw["cached"] is True
    assert second.usage.calls == 0 and second.usage.cache_hits == 1
    assert ask(make(cache=False)).raw["cached"] is False and server.calls == 2


def test_tool_calls_auto_and_forced(make, server):
    generator = make()
    server.script(Turn(text=None, tool_calls=[("Retrieve", {"query": "bm25"})]))
    reply = asyncio.run(generator.chat([{"role": "user", "content": "q"}], tools=[Retrieve]))
    assert reply.tool_call("Retrieve").arguments == {"query": "bm25"} and reply.finish_reason == "tool_calls"
    sent = server.requests[-1].json
    assert sent["tools"][0]["function"]["name"] == "Retrieve" and "tool_choice" not in sent
    assert sent["tools"][0]["function"]["parameters"]["required"] == ["query"]

    server.script(Turn(text=None, tool_calls=[("Retrieve", {"query": "forced"})]))
    asyncio.run(generator.chat([{"role": "user", "content": "q2"}], tools=[Retrieve], tool_choice="Retrieve"))
    assert server.requests[-1].json["tool_choice"] == {"type": "function", "function": {"name": "Retrieve"}}


def test_tool_results_go_back_on_the_wire(make, server):
    messages = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "Retrieve", "arguments": '{"query": "x"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": "doc text"},
    ]
    asyncio.run(make().chat(messages, tools=[Retrieve]))
    wire = server.requests[-1].json["messages"]
    assert wire[1]["tool_calls"][0]["function"] == {"name": "Retrieve", "arguments": '{"query": "x"}'}
    assert wire[2] == {"role": "tool", "tool_call_id": "call_0", "content": "doc text"}


def test_a_forced_tool_the_model_does_not_call_is_re_asked(make, server):
    server.script(Turn(text="no"), Turn(text=None, tool_calls=[("Retrieve", {"query": "ok"})]))
    reply = asyncio.run(make().chat([{"role": "user", "content": "q"}], tools=[Retrieve], tool_choice="Retrieve"))
    assert reply.tool_call("Retrieve") is not None and reply.usage.calls == 2 and server.calls == 2


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "tool"])
def test_structured_output_to_a_pydantic_model(make, server, mode):
    payload = '{"correct": true, "reason": "matches"}'
    turn = Turn(text=None, tool_calls=[("Verdict", payload)]) if mode == "tool" else Turn(text=payload)
    server.script(turn)
    reply = asyncio.run(make(structured_mode=mode).chat([{"role": "user", "content": "judge"}], response_model=Verdict))
    assert reply.parsed == Verdict(correct=True, reason="matches") and reply.tool_calls == []
    sent = server.requests[-1].json
    if mode == "json_schema":
        assert sent["response_format"]["json_schema"]["schema"]["required"] == ["correct", "reason"]
    elif mode == "json_object":
        assert sent["response_format"] == {"type": "json_object"} and "JSON schema" in sent["messages"][0]["content"]
    else:
        assert sent["tool_choice"]["function"]["name"] == "Verdict"


def test_invalid_structured_output_is_retried_with_feedback_then_fails(make, server):
    server.script(Turn(text='{"correct": "maybe"}'), Turn(text='{"correct": true, "reason": "r"}'))
    reply = asyncio.run(make().chat([{"role": "user", "content": "j"}], response_model=Verdict))
    assert (
        reply.parsed.correct is True
        and "does not match the schema" in server.requests[1].json["messages"][-1]["content"]
    )
    server.script(*[Turn(text="prose")] * 3)
    with pytest.raises(ProviderError, match="gave up after 3 replies"):
        asyncio.run(make().chat([{"role": "user", "content": "j2"}], response_model=Verdict))


def test_streaming_accumulates_text_tool_calls_and_usage(make, server):
    generator = make(stream=True)
    server.script(Turn(text="streamed answer here", usage=(50, 4, 0)))
    generation = ask(generator)
    assert generation.text == "streamed answer here" and generation.usage.input_tokens == 50
    assert server.requests[-1].json["stream_options"] == {"include_usage": True}
    server.script(Turn(text=None, tool_calls=[("Retrieve", {"query": "s"})]))
    reply = asyncio.run(generator.chat([{"role": "user", "content": "t"}], tools=[Retrieve]))
    assert reply.tool_call("Retrieve").arguments == {"query": "s"}


def test_azure_openai_by_configuration(make, server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-test-key-123456")
    generator = make(
        base_url=None, azure_endpoint=server.url, azure_deployment="test-deployment", api_version="2024-10-21"
    )
    assert ask(generator).text.startswith("echo:")
    sent = server.requests[-1]
    assert sent.path == "/openai/deployments/test-deployment/chat/completions"
    assert sent.headers["api-key"] == "azure-test-key-123456"
    with pytest.raises(ProviderError, match="api_version"):
        ask(make(base_url=None, azure_endpoint=server.url))


def test_a_missing_key_names_the_variable(make, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ProviderError, match="NO_SUCH_KEY_VAR"):
        ask(make(base_url=None, api_key_env="NO_SUCH_KEY_VAR"))
    with pytest.raises(ProviderError, match="NO_SUCH_KEY_VAR"):  # named explicitly: required even with base_url
        ask(make(api_key_env="NO_SUCH_KEY_VAR"), "another")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert ask(make(), "a self-hosted server needs no key").text.startswith("echo:")


# -- faults -------------------------------------------------------------------------------------------


def test_429_waits_for_retry_after(make, server):
    server.script(rate_limited(0.4), Turn(text="after the wait"))
    start = time.perf_counter()
    generation = ask(make())
    assert generation.text == "after the wait" and server.calls == 2
    assert time.perf_counter() - start >= 0.38


def test_5xx_is_retried_with_backoff_up_to_the_limit(make, server):
    server.script(server_error(500), server_error(503), Turn(text="third time"))
    assert ask(make(max_retries=2)).text == "third time" and server.calls == 3
    server.script(*[server_error(502)] * 3)
    with pytest.raises(ProviderError, match=r"HTTP 502: internal error 502; gave up after 3 attempts"):
        ask(make(max_retries=2), "another question")
    assert server.calls == 6


def test_a_stalled_response_times_out_with_a_clear_reason(make, server):
    server.script(stalled(30.0), stalled(30.0))
    start = time.perf_counter()
    with pytest.raises(ProviderError, match=r"no response within 0.3 s \(timeout\); gave up after 2 attempts"):
        ask(make(timeout_s=0.3, max_retries=1))
    assert time.perf_counter() - start < 30 and server.calls == 2  # gave up long before either stall ended


def test_malformed_json_is_retried_then_fails(make, server):
    server.script(malformed(), Turn(text="recovered"))
    assert ask(make()).text == "recovered" and server.calls == 2
    server.script(*[malformed()] * 3)
    with pytest.raises(ProviderError, match="malformed response"):
        ask(make(), "again")
    assert server.calls == 5


def test_a_truncated_stream_is_retried_then_fails(make, server):
    server.script(truncated_stream(), Turn(text="complete"))
    assert ask(make(stream=True)).text == "complete" and server.calls == 2
    server.script(*[truncated_stream()] * 3)
    with pytest.raises(ProviderError, match="truncated stream"):
        ask(make(stream=True), "again")
    assert server.calls == 5


def test_client_errors_fail_at_once_without_the_key(make, server):
    def echo_key(request):
        return Reply(401, {"error": {"message": f"Incorrect API key provided: {request.headers['authorization']}"}})

    server.script(echo_key)
    with pytest.raises(ProviderError, match="HTTP 401") as info:
        ask(make())
    assert server.calls == 1 and PLANTED not in str(info.value) and "PLANTED" not in repr(info.value)


def test_concurrency_is_limited_per_endpoint(make, server):
    state = {"now": 0, "peak": 0}
    lock = threading.Lock()

    def slow(request):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.1)
        with lock:
            state["now"] -= 1
        return Turn(text="ok")

    server.default = slow
    generator = make(concurrency=3, cache=False)

    async def main():
        requests = [
            GenerationRequest(question=f"q{i}", messages=[{"role": "user", "content": f"q{i}"}]) for i in range(9)
        ]
        return await asyncio.gather(*(generator.generate(r) for r in requests))

    assert len(asyncio.run(main())) == 9 and state["peak"] == 3


def test_the_http_clients_share_one_tls_context_that_follows_the_certificate_variables(monkeypatch):
    import ssl

    import openai

    from ragassay.plugins.openai_llm import _tls

    certifi = pytest.importorskip("certifi")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    client_class = openai.DefaultAsyncHttpxClient
    first, second = _tls(client_class)["verify"], _tls(client_class)["verify"]
    assert first is second  # the CA store is loaded once per process, not once per client
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname  # the library's verifying default
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    from_variable = _tls(client_class)["verify"]
    assert from_variable is not first and from_variable.cert_store_stats()["x509_ca"] > 0
