"""The LLM response cache on a real PostgreSQL server, shared by several processes' caches (Ray workers)."""

from __future__ import annotations

import pytest

from ragassay.llm.cache import ResponseCache
from ragassay.llm.types import LLMResponse, TokenUsage

pytestmark = pytest.mark.slow


def _response(text):
    return LLMResponse(text=text, model="m", usage=TokenUsage(input_tokens=3, output_tokens=2))


def test_two_caches_share_entries_and_a_racing_put_keeps_one(postgres_server, postgres_url, monkeypatch):
    monkeypatch.setenv("CACHE_PW", postgres_server.password)
    url = postgres_url.replace(f":{postgres_server.password}@", ":${CACHE_PW}@")
    first, second = ResponseCache(url), ResponseCache(url)
    try:
        first.put("k1", "openai", _response("one"))
        assert second.get("k1").text == "one"
        second.put("k1", "openai", _response("again"))  # the same request answered twice: the newer entry
        assert first.get("k1").text == "again"
        assert first.stats()["entries"] == 1
        assert postgres_server.password not in first.stats()["url"]
    finally:
        first.close()
        second.close()
