"""The micro-batcher: concurrent jobs of one group run as one batch, in a worker thread."""

from __future__ import annotations

import asyncio
import threading

import pytest

from ragassay.plugins.local_llm.batcher import Batcher


class Recorder:
    def __init__(self):
        self.batches = []
        self.threads = set()

    def __call__(self, jobs):
        self.batches.append(list(jobs))
        self.threads.add(threading.current_thread().name)
        if "boom" in jobs:
            raise RuntimeError("model failed")
        return [job.upper() for job in jobs]


def test_concurrent_jobs_share_batches_and_results_keep_their_order():
    recorder = Recorder()
    batcher = Batcher(recorder, max_batch=4, window_s=0.01)

    async def main():
        return await asyncio.gather(*(batcher.submit(f"j{i}") for i in range(10)))

    assert asyncio.run(main()) == [f"J{i}" for i in range(10)]
    assert [len(b) for b in recorder.batches] == [4, 4, 2]
    assert threading.main_thread().name not in recorder.threads


def test_groups_are_never_mixed():
    recorder = Recorder()
    batcher = Batcher(recorder, max_batch=8, window_s=0.01)

    async def main():
        return await asyncio.gather(*(batcher.submit(f"j{i}", group=i % 2) for i in range(6)))

    asyncio.run(main())
    assert sorted(sorted(b) for b in recorder.batches) == [["j0", "j2", "j4"], ["j1", "j3", "j5"]]


def test_a_failing_batch_fails_its_jobs_only():
    recorder = Recorder()
    batcher = Batcher(recorder, max_batch=2, window_s=0.01)

    async def main():
        return await asyncio.gather(
            batcher.submit("boom", group="a"), batcher.submit("fine", group="b"), return_exceptions=True
        )

    failed, fine = asyncio.run(main())
    assert isinstance(failed, RuntimeError) and fine == "FINE"


def test_a_batcher_works_across_event_loops():
    batcher = Batcher(Recorder(), window_s=0)
    assert asyncio.run(batcher.submit("a")) == "A"
    assert asyncio.run(batcher.submit("b")) == "B"


def test_max_batch_must_be_positive_and_is_clamped():
    assert Batcher(Recorder(), max_batch=0).max_batch == 1


@pytest.mark.parametrize("jobs", [1, 3])
def test_batches_run_counter(jobs):
    batcher = Batcher(Recorder(), max_batch=8, window_s=0.01)

    async def main():
        await asyncio.gather(*(batcher.submit(str(i)) for i in range(jobs)))

    asyncio.run(main())
    assert batcher.batches_run == 1
