"""Requests per minute (a sliding window on an injected clock), together with concurrency; the seam that hands
slots out from a shared budget instead (retries count as starts)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from ragassay.llm.backend import LLMBackend
from ragassay.llm.client import LLMClient
from ragassay.llm.limits import Limiter, limiter_for, set_shared_budget, shared_budget
from ragassay.llm.retry import RetryableError, RetryPolicy
from ragassay.llm.types import LLMResponse
from ragassay.plugins.anthropic_llm import AnthropicBackend, AnthropicOptions
from ragassay.plugins.openai_llm import OpenAIBackend, OpenAIOptions


class FlakyBackend(LLMBackend):
    """The far side of the client: fails its first attempt with a 429, then echoes; declares 42 rpm."""

    name = "scripted"

    def __init__(self) -> None:
        super().__init__("m")
        self.failed = False

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(max_retries=2, backoff_s=0.001, timeout_s=60)

    def requests_per_minute(self) -> int | None:
        return 42

    async def complete(self, request):
        if not self.failed:
            self.failed = True
            raise RetryableError("HTTP 429", status=429)
        return LLMResponse(text=f"echo {request.messages[-1].content}")


class FakeClock:
    """A clock that moves only when told, or when someone sleeps on it (sleeps are recorded)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 9))
        self.now += seconds
        await asyncio.sleep(0)


async def _start(limiter: Limiter) -> None:
    async with limiter:
        pass


def test_the_start_after_a_full_window_waits_until_the_oldest_start_leaves_it():
    clock = FakeClock()
    limiter = Limiter(8, rpm=3, clock=clock, sleep=clock.sleep)

    async def main():
        for _ in range(3):  # starts at 0, 10, 20 s
            await _start(limiter)
            clock.now += 10
        await _start(limiter)  # at 30 s: waits until 60 s, when the start at 0 leaves the window
        fourth = clock.now - 1000
        await _start(limiter)  # at 60 s: the start at 10 s leaves at 70 s
        return fourth, clock.now - 1000

    assert asyncio.run(main()) == (60.0, 70.0)
    assert clock.sleeps == [30.0, 10.0]


def test_starts_spread_out_do_not_wait():
    clock = FakeClock()
    limiter = Limiter(8, rpm=2, clock=clock, sleep=clock.sleep)

    async def main():
        for _ in range(5):
            await _start(limiter)
            clock.now += 30

    asyncio.run(main())
    assert clock.sleeps == []


def test_concurrency_and_rpm_together():
    clock = FakeClock()
    limiter = Limiter(2, rpm=3, clock=clock, sleep=clock.sleep)
    entered: list[tuple[int, float]] = []

    async def call(i: int, gate: asyncio.Event):
        async with limiter:
            entered.append((i, clock.now - 1000))
            await gate.wait()

    async def main():
        events = [asyncio.Event() for _ in range(4)]
        tasks = [asyncio.create_task(call(i, events[i])) for i in range(4)]
        await asyncio.sleep(0.01)
        first = list(entered)  # the concurrency limit: 2 in
        clock.now += 5
        events[0].set()
        await asyncio.sleep(0.01)
        second = list(entered)  # a slot is free and the window has room: the third starts at once
        clock.now += 5
        events[1].set()
        await asyncio.sleep(0.01)  # a slot is free, but 3 starts are in the window: wait for the first to leave
        events[2].set()
        events[3].set()
        await asyncio.gather(*tasks)
        return first, second

    first, second = asyncio.run(main())
    assert first == [(0, 0.0), (1, 0.0)]
    assert second == first + [(2, 5.0)]
    assert entered == first + [(2, 5.0), (3, 60.0)]
    assert clock.sleeps == [50.0]
    assert limiter.active == 0


def test_a_call_cancelled_while_paced_gives_its_slot_back():
    limiter = Limiter(1, rpm=1)  # the real clock: the second start would wait a minute

    async def main():
        await _start(limiter)
        waiting = asyncio.create_task(_start(limiter))
        await asyncio.sleep(0.01)
        held = limiter.active
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        return held, limiter.active

    assert asyncio.run(main()) == (1, 0)


def test_the_smallest_rpm_declared_wins():
    async def main():
        a = limiter_for("openai", "http://rpm", 8, rpm=100)
        b = limiter_for("openai", "http://rpm", 8, rpm=10)
        c = limiter_for("openai", "http://rpm", 8)  # None leaves it as it is
        d = limiter_for("openai", "http://rpm-2", 8)
        return a is b is c, a.rpm, d.rpm

    assert asyncio.run(main()) == (True, 10, None)


def test_http_backends_expose_requests_per_minute():
    assert OpenAIBackend(OpenAIOptions(requests_per_minute=500)).requests_per_minute() == 500
    assert AnthropicBackend(AnthropicOptions(requests_per_minute=50)).requests_per_minute() == 50
    assert OpenAIBackend(OpenAIOptions()).requests_per_minute() is None
    assert OpenAIOptions.model_fields["requests_per_minute"].description
    with pytest.raises(ValidationError):
        OpenAIOptions(requests_per_minute=0)


class RecordingBudget:
    """An in-process shared budget (the far side of the seam): counts slots, records every acquire."""

    def __init__(self) -> None:
        self.acquired: list[tuple[tuple[str, str], int, int | None]] = []
        self.released: list[int] = []
        self.in_flight = 0

    async def acquire(self, key, limit, rpm):
        await asyncio.sleep(0)
        self.acquired.append((key, limit, rpm))
        self.in_flight += 1
        return len(self.acquired)

    async def release(self, token):
        self.in_flight -= 1
        self.released.append(token)


@pytest.fixture
def budget():
    installed = RecordingBudget()
    set_shared_budget(installed)
    try:
        yield installed
    finally:
        set_shared_budget(None)


def test_limiter_for_takes_slots_from_the_installed_budget(budget):
    assert shared_budget() is budget

    async def main():
        slot = limiter_for("openai", "http://shared", 3, rpm=7)
        async with slot:
            inside = budget.in_flight
        return inside

    assert asyncio.run(main()) == 1
    assert budget.acquired == [(("openai", "http://shared"), 3, 7)] and budget.released == [1]


def test_every_attempt_of_a_client_call_is_one_start_from_the_budget(budget):
    client = LLMClient(FlakyBackend())
    concurrent = [client.chat([{"role": "user", "content": f"q{i}"}]) for i in range(3)]

    async def main():
        return await asyncio.gather(*concurrent)

    replies = asyncio.run(main())
    assert [r.text for r in replies] == ["echo q0", "echo q1", "echo q2"]
    assert budget.acquired == [(("scripted", ""), 8, 42)] * 4  # three calls, one of them retried
    assert sorted(budget.released) == [1, 2, 3, 4] and budget.in_flight == 0


def test_uninstalling_the_budget_goes_back_to_local_limiters(budget):
    set_shared_budget(None)

    async def main():
        return limiter_for("openai", "http://local", 2)

    assert isinstance(asyncio.run(main()), Limiter)
    assert budget.acquired == []
