"""A micro-batcher: concurrent requests that arrive within a few milliseconds run as one batch.

Callers ``await batcher.submit(job, group)``; jobs with the same ``group`` (e.g. the same decoding settings)
may share a batch. One worker per event loop collects jobs for ``window_s`` (or until ``max_batch`` are
waiting), then runs ``run_batch(jobs)`` in a worker thread (``asyncio.to_thread``) so the event loop stays
free. Batches run one at a time: a CPU model gains nothing from running two.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Hashable, Sequence
from typing import Any


@dataclasses.dataclass
class _Pending:
    job: Any
    group: Hashable
    future: asyncio.Future


class Batcher:
    """Collects jobs into batches of at most ``max_batch`` and runs them with ``run_batch`` in a thread.

    ``run_batch`` receives a list of jobs of one group and returns one result per job, in order; an exception
    fails every job of that batch.
    """

    def __init__(
        self, run_batch: Callable[[Sequence[Any]], Sequence[Any]], *, max_batch: int = 8, window_s: float = 0.005
    ):
        self.run_batch = run_batch
        self.max_batch = max(1, max_batch)
        self.window_s = window_s
        self.batches_run = 0
        self._queue: list[_Pending] = []
        self._worker: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def submit(self, job: Any, group: Hashable = None) -> Any:
        """Queue ``job`` and wait for its result."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop (e.g. a second asyncio.run): start afresh
            self._loop, self._queue, self._worker = loop, [], None
        pending = _Pending(job, group, loop.create_future())
        self._queue.append(pending)
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._work())
        return await pending.future

    async def _work(self) -> None:
        while self._queue:
            if len(self._queue) < self.max_batch:
                await asyncio.sleep(self.window_s)  # let concurrent callers join the batch
            batch = self._take()
            if not batch:
                continue
            try:
                results = await asyncio.to_thread(self.run_batch, [p.job for p in batch])
            except Exception as exc:  # noqa: BLE001 - delivered to every caller of the batch
                for pending in batch:
                    if not pending.future.done():
                        pending.future.set_exception(exc)
                continue
            self.batches_run += 1
            for pending, result in zip(batch, results):
                if not pending.future.done():
                    pending.future.set_result(result)

    def _take(self) -> list[_Pending]:
        """Up to ``max_batch`` waiting jobs of the oldest job's group (cancelled callers dropped)."""
        self._queue = [p for p in self._queue if not p.future.done()]
        if not self._queue:
            return []
        group = self._queue[0].group
        batch = [p for p in self._queue if p.group == group][: self.max_batch]
        taken = {id(p) for p in batch}
        self._queue = [p for p in self._queue if id(p) not in taken]
        return batch
