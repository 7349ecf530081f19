"""Buffered results are written at quiet moments of the event loop, never amid a burst of replies."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from ragassay.engine import flushing
from ragassay.engine.flushing import WriteBuffer, with_quiet_writes


@pytest.fixture
def due_at_once(monkeypatch):
    monkeypatch.setattr(flushing, "FLUSH_EVERY_S", 0.0)
    monkeypatch.setattr(flushing, "FLUSH_LATEST_S", 3600.0)


async def bursts(sizes, gap_s, closed=None):
    """Bursts of items ready at once (replies that came back together), a pause of ``gap_s`` between them."""
    try:
        for number, size in enumerate(sizes):
            if number:
                await asyncio.sleep(gap_s)
            for item in range(size):
                yield (number, item)
    finally:
        if closed is not None:
            closed.append(True)


async def consume(stream, buffer, stop_after=None):
    seen = 0
    async with contextlib.aclosing(with_quiet_writes(stream, buffer)) as items:
        async for item in items:
            buffer.add([item])
            seen += 1
            if buffer.required():
                buffer.flush()
            if seen == stop_after:
                break
    buffer.flush()


def test_a_due_write_waits_for_the_pause_after_a_burst(due_at_once):
    """Items that are ready together are never split by a write, however slow the machine: a write needs
    QUIET_S with no item ready, and the pauses (5 x QUIET_S) give it that."""
    written = []
    buffer = WriteBuffer(lambda results: written.append(len(results)))
    asyncio.run(consume(bursts([5, 7, 3], gap_s=5 * flushing.QUIET_S), buffer))
    assert written == [5, 7, 3]


def test_without_pauses_the_batch_size_still_bounds_the_buffer(due_at_once, monkeypatch):
    monkeypatch.setattr(flushing, "FLUSH_BATCH", 4)
    written = []
    buffer = WriteBuffer(lambda results: written.append(len(results)))
    asyncio.run(consume(bursts([10], gap_s=0), buffer))
    assert written == [4, 4, 2]


def test_nothing_is_written_before_it_is_due(monkeypatch):
    monkeypatch.setattr(flushing, "FLUSH_EVERY_S", 3600.0)
    monkeypatch.setattr(flushing, "FLUSH_LATEST_S", 3600.0)
    written = []
    buffer = WriteBuffer(lambda results: written.append(len(results)))
    asyncio.run(consume(bursts([2, 2, 2], gap_s=2 * flushing.QUIET_S), buffer))
    assert written == [6]  # the caller's last flush only


def test_stopping_early_closes_the_stream_and_the_wait_for_its_next_item(due_at_once):
    closed, written = [], []

    async def main():
        buffer = WriteBuffer(lambda results: written.append(len(results)))
        stream = bursts([2, 2], gap_s=3600, closed=closed)  # the second burst never comes in time
        task = asyncio.ensure_future(consume(stream, buffer))
        while not written:  # the first burst, written in the pause
            await asyncio.sleep(flushing.QUIET_S)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    assert asyncio.run(main()) == []
    assert written == [2] and closed == [True]


def test_a_failed_write_keeps_the_results_for_the_next_try(due_at_once):
    calls = []

    def write(results):
        calls.append(len(results))
        if len(calls) == 1:
            raise OSError("disk full")

    buffer = WriteBuffer(write)
    buffer.add([1, 2])
    with pytest.raises(OSError):
        buffer.flush()
    buffer.flush()
    assert calls == [2, 2] and buffer.results == []
