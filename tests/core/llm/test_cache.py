"""The response cache: what the key covers, persistence, clearing, stats, format changes."""

from __future__ import annotations

import sqlite3

from ragassay.llm.cache import ResponseCache, close_caches, open_cache
from ragassay.llm.cache_keys import CACHE_FORMAT, cache_key
from ragassay.llm.types import ChatMessage, DecodingParams, LLMRequest, LLMResponse, ToolSpec
from ragassay.models import TokenUsage

IDENTITY = {"backend": "openai", "model": "gpt-4o-mini"}


def request(content="hi", **kwargs):
    return LLMRequest(messages=[ChatMessage(role="user", content=content)], **kwargs)


def test_key_is_stable_and_covers_every_input():
    base = cache_key(IDENTITY, request())
    assert base == cache_key(dict(reversed(list(IDENTITY.items()))), request()) and len(base) == 64
    variants = [
        cache_key({**IDENTITY, "model": "gpt-4o"}, request()),
        cache_key({**IDENTITY, "backend": "anthropic"}, request()),
        cache_key(IDENTITY, request("hello")),
        cache_key(IDENTITY, request(tools=[ToolSpec(name="t")])),
        cache_key(IDENTITY, request(tools=[ToolSpec(name="t")], tool_choice="t")),
        cache_key(IDENTITY, request(response_schema={"type": "object"})),
        cache_key(IDENTITY, request(params=DecodingParams(max_tokens=5))),
        cache_key(IDENTITY, request(params=DecodingParams(seed=1))),
        cache_key(IDENTITY, request(params=DecodingParams(temperature=0.5))),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_sample_index_is_part_of_the_key_only_when_sampling():
    greedy = [cache_key(IDENTITY, request(sample_index=i)) for i in range(3)]
    sampled = [cache_key(IDENTITY, request(sample_index=i, params=DecodingParams(temperature=0.7))) for i in range(3)]
    assert len(set(greedy)) == 1 and len(set(sampled)) == 3


def test_put_get_roundtrip_survives_reopening(tmp_path):
    url = f"sqlite:///{tmp_path}/c/llm-cache.db"
    cache = ResponseCache(url)
    response = LLMResponse(
        text="answer",
        model="gpt-4o-mini",
        finish_reason="stop",
        usage=TokenUsage(input_tokens=7, output_tokens=2, calls=1),
        cost_usd=0.1,
    )
    cache.put("k1", "openai", response)
    cache.close()
    again = ResponseCache(url)
    hit = again.get("k1")
    assert hit.cached and hit.text == "answer" and hit.usage.input_tokens == 7 and hit.cost_usd is None
    assert again.get("missing") is None
    again.close()


def test_stats_and_clear_by_backend_and_model(tmp_path):
    cache = ResponseCache(f"sqlite:///{tmp_path}/c.db")
    for i, (backend, model) in enumerate([("openai", "a"), ("openai", "b"), ("anthropic", "c")]):
        cache.put(
            f"k{i}", backend, LLMResponse(text="x", model=model, usage=TokenUsage(input_tokens=10, output_tokens=1))
        )
    stats = cache.stats()
    assert stats["entries"] == 3 and {r["model"]: r["input_tokens"] for r in stats["by_model"]} == {
        "a": 10,
        "b": 10,
        "c": 10,
    }
    assert cache.clear(backend="openai", model="b") == 1
    assert cache.clear(backend="openai") == 1
    assert cache.get("k2") is not None and cache.clear() == 1 and cache.stats()["entries"] == 0
    cache.close()


def test_a_cache_of_another_format_is_dropped(tmp_path):
    url = f"sqlite:///{tmp_path}/c.db"
    cache = ResponseCache(url)
    cache.put("k", "openai", LLMResponse(text="old"))
    cache.close()
    with sqlite3.connect(tmp_path / "c.db") as conn:
        conn.execute("UPDATE llm_cache_meta SET format = ?", (CACHE_FORMAT + 99,))
    reopened = ResponseCache(url)
    assert reopened.get("k") is None
    reopened.close()


def test_open_cache_shares_one_object_per_url(tmp_path):
    url = f"sqlite:///{tmp_path}/shared.db"
    try:
        assert open_cache(url) is open_cache(url)
    finally:
        close_caches()


def test_urls_are_shown_without_passwords():
    from ragassay.llm.cache import display_url

    assert display_url("postgresql://user:hunter2@db/cache") == "postgresql://user:***@db/cache"
    assert display_url("sqlite:////tmp/llm-cache.db") == "sqlite:////tmp/llm-cache.db"
