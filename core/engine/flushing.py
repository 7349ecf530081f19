"""When the runner stores the results it has buffered: at a quiet moment of the event loop, not amid replies.

Writing a batch (about 16 statements and a commit) holds the event loop for 2-11 ms. Model calls that run at
the same concurrency and latency come back in bursts; a write made as soon as it is due falls inside a burst
and every reply behind it in that burst waits. In ``benchmarks/judges_run.py`` that cost each call 1.2 ms on
average, more than all of ragassay's other work per call (docs/llm.md, A whole run).

So a batch that is due (:data:`FLUSH_EVERY_S` after the last write) is written at the next moment when no
result has come for :data:`QUIET_S`, and at the latest :data:`FLUSH_LATEST_S` after the last write, or as soon
as :data:`FLUSH_BATCH` results are waiting. A result therefore reaches the database within about a second of
being produced, and an interrupted run loses no more than that (it is redone when the run resumes).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

QUIET_S = 0.02
FLUSH_EVERY_S = 0.25
FLUSH_LATEST_S = 1.0
FLUSH_BATCH = 512


class WriteBuffer:
    """Results waiting to be written, and when they are due."""

    def __init__(self, write: Callable[[list[Any]], None]) -> None:
        self._write = write
        self.results: list[Any] = []
        self._last = time.perf_counter()

    def add(self, results: list[Any]) -> None:
        self.results += results

    def wanted(self) -> bool:
        """A write is due: at the next quiet moment."""
        return bool(self.results) and time.perf_counter() - self._last >= FLUSH_EVERY_S

    def required(self) -> bool:
        """A write cannot wait any longer."""
        return len(self.results) >= FLUSH_BATCH or time.perf_counter() - self._last >= FLUSH_LATEST_S

    def flush(self) -> None:
        """Write what is buffered (the time counts from here even when nothing was)."""
        if self.results:
            self._write(self.results)
        self.results, self._last = [], time.perf_counter()


async def with_quiet_writes(stream: AsyncIterator[Any], buffer: WriteBuffer) -> AsyncIterator[Any]:
    """The items of ``stream``; while ``buffer`` wants a write, a wait of :data:`QUIET_S` with no item ready
    writes it (the wait for that item goes on). The caller adds items to ``buffer`` and writes what is required.
    """
    items = aiter(stream)
    pending: asyncio.Future | None = None
    try:
        while True:
            if pending is None and buffer.wanted():
                pending = asyncio.ensure_future(anext(items))
            if pending is not None and buffer.wanted():
                done, _ = await asyncio.wait({pending}, timeout=QUIET_S)
                if not done:
                    buffer.flush()
                    continue
            try:
                item = await (pending if pending is not None else anext(items))
            except StopAsyncIteration:
                return
            pending = None
            yield item
    finally:
        if pending is not None and not pending.done():
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
