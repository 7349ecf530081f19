"""Concurrency limits: shared per backend and endpoint, the smallest declared limit wins."""

from __future__ import annotations

import asyncio

from ragassay.llm.limits import Limiter, limiter_for


async def _peak(limiter: Limiter, tasks: int) -> int:
    state = {"now": 0, "peak": 0}

    async def work():
        async with limiter:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            await asyncio.sleep(0.01)
            state["now"] -= 1

    await asyncio.gather(*(work() for _ in range(tasks)))
    return state["peak"]


def test_limiter_caps_in_flight_work():
    assert asyncio.run(_peak(Limiter(3), 20)) == 3


def test_cancelled_waiters_do_not_leak_slots():
    async def main():
        limiter = Limiter(1)
        async with limiter:
            waiter = asyncio.create_task(limiter.__aenter__())
            await asyncio.sleep(0)
            waiter.cancel()
        return await _peak(limiter, 5), limiter.active

    assert asyncio.run(main()) == (1, 0)


def test_limiters_are_shared_per_endpoint_and_lowered():
    async def main():
        a = limiter_for("openai", "http://x", 8)
        b = limiter_for("openai", "http://x", 4)
        c = limiter_for("openai", "http://y", 8)
        return a is b, a.limit, a is c

    assert asyncio.run(main()) == (True, 4, False)


def test_each_event_loop_gets_its_own_limiter():
    first = asyncio.run(_get())
    second = asyncio.run(_get())
    assert first is not second


async def _get():
    return limiter_for("openai", "http://loop", 2)
