"""RemoteBackend: what an HTTP backend takes from RemoteOptions, and its clients per event loop."""

from __future__ import annotations

import asyncio

from ragassay.llm import LLMResponse, RemoteBackend, RemoteOptions, RetryPolicy


class CountingBackend(RemoteBackend):
    name = "counting"

    def __init__(self, options: RemoteOptions):
        self.made = 0
        super().__init__(options)

    def make_client(self) -> dict:
        self.made += 1
        return {"number": self.made}

    async def complete(self, request) -> LLMResponse:
        raise NotImplementedError


def test_retry_policy_and_limits_come_from_the_options():
    options = RemoteOptions(
        model="m",
        max_retries=3,
        backoff_s=0.5,
        max_backoff_s=4,
        max_retry_after_s=9,
        timeout_s=7,
        retry_deadline_s=11,
        concurrency=24,
        requests_per_minute=600,
    )
    backend = CountingBackend(options)
    assert backend.model == "m"
    assert backend.retry_policy() == RetryPolicy(3, 0.5, 4, 9, 7, deadline_s=11)
    assert backend.concurrency() == 24
    assert backend.requests_per_minute() == 600


def test_clients_are_made_per_loop_and_shard_on_first_use():
    backend = CountingBackend(RemoteOptions(model="m", concurrency=16))  # 2 shards of 8 calls
    assert backend.made == 0

    async def three() -> list[dict]:
        return [backend.client() for _ in range(3)]

    first = asyncio.run(three())
    assert [c["number"] for c in first] == [1, 2, 1]  # two clients, handed out in turn
    second = asyncio.run(three())
    assert {c["number"] for c in second} == {3, 4}  # another loop: its own clients
