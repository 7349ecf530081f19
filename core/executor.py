"""Executors dispatch independent units of work. The runner only talks to this interface, so a
distributed engine (Ray, Dask, a queue) can be added later without touching systems or metrics.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs ``fn`` on every item and yields results as they complete (any order)."""

    def map(self, fn: Callable[[T], Awaitable[R]], items: Iterable[T]) -> AsyncIterator[R]: ...


class LocalExecutor:
    """Runs work in this process's event loop, at most ``concurrency`` items at once.

    Items are pulled lazily from the iterable, so memory does not grow with the number of items.
    ``fn`` must not raise: wrap failures into its result (the runner does).
    """

    def __init__(self, concurrency: int = 8):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency

    async def map(self, fn: Callable[[T], Awaitable[R]], items: Iterable[T]) -> AsyncIterator[R]:
        iterator = iter(items)
        results: asyncio.Queue = asyncio.Queue(maxsize=self.concurrency * 4)
        errors: list[BaseException] = []
        done = object()

        async def worker() -> None:
            try:
                for item in iterator:  # shared iterator: each item is taken by one worker
                    await results.put(await fn(item))
            except asyncio.CancelledError:
                raise  # the consumer is gone: put nothing more
            except Exception as exc:  # noqa: BLE001 - a bug in fn: surfaced by the consumer
                errors.append(exc)
            await results.put(done)

        workers = [asyncio.create_task(worker()) for _ in range(self.concurrency)]
        remaining = len(workers)
        try:
            while remaining:
                result = await results.get()
                if result is done:
                    remaining -= 1
                    if errors:
                        raise errors[0]
                else:
                    yield result
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
