"""A bounded micro-batcher: the texts that concurrent callers submit within a few milliseconds run as one batch.

Callers ``await batcher.submit(text)``. One worker per event loop collects the waiting texts for ``window_s``
(or until ``max_batch`` are waiting), then runs ``run_batch(texts)`` in a worker thread (``asyncio.to_thread``),
so model inference never blocks the event loop; batches run one at a time (a CPU model gains nothing from two).
The queue is bounded: at most ``max_pending`` distinct texts wait or run; a caller beyond that waits for room.
A text already waiting or running is not queued twice: its callers share one result. The pattern is the local
generator's (:mod:`ragassay.plugins.local_llm.batcher`), keyed by text and bounded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any


class MicroBatcher:
    """Runs submitted texts in batches of at most ``max_batch`` with ``run_batch`` in a thread.

    ``run_batch`` receives a list of distinct texts and returns one result per text, in order; an exception
    fails every caller of that batch.
    """

    def __init__(
        self,
        run_batch: Callable[[Sequence[str]], Sequence[Any]],
        *,
        max_batch: int = 32,
        window_s: float = 0.002,
        max_pending: int = 1024,
    ):
        self.run_batch = run_batch
        self.max_batch = max(1, max_batch)
        self.window_s = window_s
        self.max_pending = max(self.max_batch, max_pending)
        self.batches_run = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Fresh state for ``loop`` (a second ``asyncio.run`` starts afresh)."""
        self._loop = loop
        self._queue: list[str] = []
        self._futures: dict[str, asyncio.Future] = {}  # waiting or running texts
        self._room = asyncio.Semaphore(self.max_pending)
        self._worker: asyncio.Task | None = None

    async def submit(self, text: str) -> Any:
        """Queue ``text`` (unless it is already waiting or running) and wait for its result."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._start(loop)
        future = self._futures.get(text)
        if future is None:
            await self._room.acquire()
            future = self._futures.get(text)  # queued by another caller while this one waited for room
            if future is None:
                future = loop.create_future()
                future.add_done_callback(self._finished)
                self._futures[text] = future
                self._queue.append(text)
                if self._worker is None or self._worker.done():
                    self._worker = loop.create_task(self._work())
            else:
                self._room.release()
        return await asyncio.shield(future)  # a cancelled caller leaves the shared result to the others

    def _finished(self, future: asyncio.Future) -> None:
        self._room.release()
        if not future.cancelled():
            future.exception()  # retrieved: no "exception never retrieved" when every caller was cancelled

    async def _work(self) -> None:
        while self._queue:
            if len(self._queue) < self.max_batch:
                await asyncio.sleep(self.window_s)  # let concurrent callers join the batch
            batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch :]
            try:
                results = await asyncio.to_thread(self.run_batch, batch)
                if len(results) != len(batch):
                    raise RuntimeError(f"a batch of {len(batch)} texts gave {len(results)} results")
            except Exception as exc:  # noqa: BLE001 - delivered to every caller of the batch
                for text in batch:
                    self._futures.pop(text).set_exception(exc)
                continue
            self.batches_run += 1
            for text, result in zip(batch, results):
                self._futures.pop(text).set_result(result)
