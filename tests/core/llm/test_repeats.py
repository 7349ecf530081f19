"""The repeat index of ``run --repeat N`` (ragassay.llm.repeating) reaches every request and the cache key."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.llm import current_repeat, repeating
from ragassay.llm.cache_keys import cache_key
from ragassay.llm.types import ChatMessage, DecodingParams, LLMRequest


def _request(**fields) -> LLMRequest:
    return LLMRequest(messages=[ChatMessage(role="user", content="hi")], params=DecodingParams(), **fields)


def test_repeat_zero_keeps_existing_keys_and_other_repeats_differ_even_greedy():
    keys = [cache_key({"backend": "openai", "model": "m"}, _request(repeat=r)) for r in range(3)]
    assert len(set(keys)) == 3
    assert keys[0] == cache_key({"backend": "openai", "model": "m"}, _request())


def test_repeating_is_a_context_that_tasks_inherit():
    async def inside():
        with repeating(2):
            return await asyncio.gather(asyncio.sleep(0, result=current_repeat()), asyncio.to_thread(current_repeat))

    assert asyncio.run(inside()) == [2, 2] and current_repeat() == 0
    with pytest.raises(ValueError):
        with repeating(-1):
            pass
