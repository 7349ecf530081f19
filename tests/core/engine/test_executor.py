"""LocalExecutor: bounded concurrency, lazy consumption, every item exactly once."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.engine.executor import LocalExecutor


def test_bounded_concurrency_and_every_item_once():
    active = peak = 0
    pulled = []

    def items():
        for i in range(50):
            pulled.append(i)
            yield i

    async def work(i):
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.001 * (i % 3))
        active -= 1
        return i * 2

    async def main():
        return [r async for r in LocalExecutor(4).map(work, items())]

    results = asyncio.run(main())
    assert sorted(results) == [i * 2 for i in range(50)]
    assert peak == 4 and len(pulled) == 50


def test_items_are_pulled_lazily():
    pulled = []

    def items():
        for i in range(1000):
            pulled.append(i)
            yield i

    async def work(i):
        return i

    async def main():
        async for result in LocalExecutor(2).map(work, items()):
            if result >= 5:
                break

    asyncio.run(main())
    assert len(pulled) < 100


def test_a_bug_in_the_work_function_is_raised_not_swallowed():
    async def work(i):
        if i == 3:
            raise KeyError("bug")
        return i

    async def main():
        return [r async for r in LocalExecutor(2).map(work, range(10))]

    with pytest.raises(KeyError):
        asyncio.run(main())


def test_concurrency_must_be_positive():
    with pytest.raises(ValueError):
        LocalExecutor(0)


def test_an_async_source_may_wait_for_results_while_the_slots_stay_bounded():
    """A sequential run's source: the second half is made only once the first half's results are all back."""
    active = peak = 0
    returned: list[int] = []
    half = asyncio.Event()

    async def items():
        for i in range(20):
            yield i
        await half.wait()  # every worker asking meanwhile waits here, none takes an item twice
        for i in range(20, 40):
            yield i

    async def work(i):
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.001 * (i % 3))
        active -= 1
        returned.append(i)
        if len([r for r in returned if r < 20]) == 20:
            half.set()
        return i

    async def main():
        return [r async for r in LocalExecutor(4).map(work, items())]

    results = asyncio.run(asyncio.wait_for(main(), 10))
    assert sorted(results) == list(range(40)) and peak == 4
    assert all(r >= 20 for r in results[results.index(20) :])  # nothing of the second half before the first
