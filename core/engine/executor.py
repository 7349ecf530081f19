"""Executors dispatch independent units of work. The runner only talks to this seam:

- :class:`LocalExecutor` maps an async function over items in this process's event loop;
- a distributed executor (:class:`ragassay.engine.ray_executor.RayExecutor`) has ``process(job, work)``
  instead: workers build their own processor from a picklable :class:`~ragassay.engine.processing.WorkerJob` and
  process ``(item, inputs)`` batches, yielding ``(results, stored)`` pairs.

:func:`executor_for` picks one from ``[project] executor``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeVar

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

    async def map(self, fn: Callable[[T], Awaitable[R]], items: Iterable[T] | AsyncIterable[T]) -> AsyncIterator[R]:
        """``fn`` over ``items``, at most ``concurrency`` at once, results as they complete. ``items`` may be an
        async iterable (a sequential run's, which waits for a batch's check before making the work after it):
        workers take from it one at a time."""
        done = object()
        next_item = _taker(items, done)
        results: asyncio.Queue = asyncio.Queue(maxsize=self.concurrency * 4)
        errors: list[BaseException] = []

        async def worker() -> None:
            try:
                while (item := await next_item()) is not done:  # shared source: each item is taken by one worker
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
            if hasattr(items, "aclose"):
                await items.aclose()


def _taker(items: Iterable[T] | AsyncIterable[T], done: object) -> Callable[[], Awaitable[Any]]:
    """A coroutine function returning the next item of ``items`` (``done`` after the last), safe to call from
    several workers at once."""
    if not hasattr(items, "__aiter__"):
        iterator = iter(items)

        async def take_sync() -> Any:
            return next(iterator, done)

        return take_sync
    source, lock = items.__aiter__(), asyncio.Lock()

    async def take() -> Any:
        async with lock:  # an async generator cannot be advanced by two workers at once
            return await anext(source, done)

    return take


def executor_for(config: Any, store: Any) -> Any:
    """The executor ``[project] executor`` names, for a run writing to ``store``."""
    if config.project.executor == "ray":
        from .ray_executor import RayExecutor

        return RayExecutor(
            config.project.ray, workers_can_write=store.worker_url is not None, concurrent=store.concurrent_writers
        )
    return LocalExecutor(config.project.concurrency)


def with_executor(loaded: Any, executor: str | None = None, address: str | None = None, workers: int | None = None):
    """``loaded`` with ``run --executor/--address/--workers`` applied (a copy; None leaves a setting as is).

    ``--address`` or ``--workers`` alone imply the Ray executor.
    """
    project = loaded.config.project
    ray = project.ray.model_copy(
        update={k: v for k, v in {"address": address, "workers": workers}.items() if v is not None}
    )
    if executor is None and (address is not None or workers is not None):
        executor = "ray"
    project = project.model_copy(update={"ray": ray, "executor": executor or project.executor})
    return dataclasses.replace(loaded, config=loaded.config.model_copy(update={"project": project}))
