"""A sequential run's batches, pipelined (``ragassay run --sequential``; the decisions:
:mod:`ragassay.engine.sequential.plan`).

The work of every batch goes to **one** executor stream, so the run never waits for a batch's slowest unit with
its slots empty. ``lookahead`` (``[evaluation] sequential``, default 1) batches run ahead of the check: the
units of batch j go to the systems still open after the check of batch j - 1 - lookahead (every system for the
first 1 + lookahead batches), and making them waits for that check (for its batch to be complete and stored).
So the units processed are a function of the seed and the scores only, never of concurrency or timing: a
system settled at the check after batch k is processed on exactly k + lookahead batches (fewer when the run has
fewer), and an interrupted or budget-stopped run resumed later makes exactly the remaining ones. The checks
still see complete batches only, in the seeded order, one after the other; each reads back from the store the
values of its own batch only (:meth:`ragassay.engine.sequential.plan.SequentialPlan.add`), so a check costs the same
at the end of a long run as at its start.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any


class Batches:
    """The batches in flight: which unit belongs to which batch, and when a batch is complete and stored.

    The runner tells it of each result (:meth:`seen`: True when the results complete a batch, which the
    runner then writes at once) and of the write that followed (:meth:`stored`)."""

    def __init__(self, ledger: Any) -> None:
        self.ledger = ledger
        self.pending: dict[int, int] = {}  # batch -> units not returned yet
        self.batch_of: dict[tuple[str, str], int] = {}  # (system, question id) -> batch, while in flight
        self.dealt: set[int] = set()  # batches whose every unit has been handed out
        self.complete: dict[int, bool] = {}  # batch -> whether the budget had not stopped the session by then
        self.events: dict[int, asyncio.Event] = {}
        self.unstored: list[int] = []

    def add(self, batch: int, system: str, question_id: str) -> None:
        """One unit of ``batch`` handed to the executor."""
        self.batch_of[(system, question_id)] = batch
        self.pending[batch] = self.pending.get(batch, 0) + 1

    def dealt_all(self, batch: int) -> None:
        """Every unit of ``batch`` is counted, its last one not handed out yet (so its result, which completes
        the batch, is written before the check); a batch with nothing left to do is complete now."""
        self.dealt.add(batch)
        if not self.pending.get(batch):
            self._complete(batch)
            self.stored()

    def seen(self, results: list[Any]) -> bool:
        """Count ``results``; True when they complete a batch (to be written before it is checked)."""
        due = False
        for result in results:
            batch = self.batch_of.pop((result.system, result.question_id), None)
            if batch is None:
                continue
            self.pending[batch] -= 1
            if not self.pending[batch] and batch in self.dealt:
                self._complete(batch)
                due = True
        return due

    def _complete(self, batch: int) -> None:
        # clean: no call of the batch was refused (every one ran before the budget stopped the session)
        self.complete[batch] = self.ledger is None or self.ledger.stopped is None
        self.unstored.append(batch)

    def stored(self) -> None:
        """The batches completed so far are written: their checks may read them."""
        for batch in self.unstored:
            self.event(batch).set()
        self.unstored = []

    def event(self, batch: int) -> asyncio.Event:
        return self.events.setdefault(batch, asyncio.Event())

    def forget(self, batch: int) -> None:
        self.events.pop(batch, None)
        self.pending.pop(batch, None)


class Pipeline:
    """The work of a sequential run as one async stream of items (see the module docstring)."""

    def __init__(self, runner: Any, run_id: str, ledger: Any, *, reuse: bool) -> None:
        self.runner, self.run_id, self.ledger, self.reuse = runner, run_id, ledger, reuse
        self.plan = runner.sequential
        self.spool = runner.samples()
        self.total = len(self.spool)
        self.plan.clusters = processing_clusters(self.spool)
        self.ends = self.plan.boundaries(self.total)
        self.batches = Batches(ledger)
        self.ids: dict[int, list[str]] = {}  # batch -> its question ids, until checked
        self.checked = 0  # batches checked
        self.stopped = False  # a batch was incomplete (budget): nothing after it is checked or started
        self.assigned: dict[str, int] = {}  # system -> samples of the batches given to it so far

    async def items(self) -> AsyncIterator[Any]:
        """The work items, batch by batch; batch j waits for the check of batch j - 1 - lookahead."""
        lookahead, systems = self.plan.settings.lookahead, self.runner.plan.systems
        parts = self.spool.parts(self.ends)
        try:
            for batch, (end, part) in enumerate(zip(self.ends, parts)):
                try:
                    if batch > lookahead and not await self.check_through(batch - 1 - lookahead):
                        return
                    active = self.plan.active()
                    if not active:
                        return
                    self.ids[batch] = [qid for qid, _ in part.records()]
                    for name in active:
                        self.assigned[name] = end
                    work = self.runner.work(
                        self.run_id, reuse=self.reuse, samples=part, systems=[s for s in systems if s.name in active]
                    )
                    last = None  # held back: the batch is marked dealt before its last item goes out
                    for item in work.items():
                        if self.ledger is not None and self.ledger.check_time() is not None:
                            return
                        for system, _ in item.units:
                            self.batches.add(batch, system.name, item.sample.question_id)
                        if last is not None:
                            yield last
                        last = item
                    self.batches.dealt_all(batch)
                    if last is not None:
                        yield last
                finally:
                    part.close()
        finally:
            parts.close()

    async def check_through(self, last: int) -> bool:
        """Check batches up to ``last`` in order, each once it is complete and stored; False when one was cut
        short by the budget (it and everything after it stay unchecked)."""
        while self.checked <= last and not self.stopped and self.plan.active():
            batch = self.checked
            await self.batches.event(batch).wait()
            if not self.batches.complete.get(batch):
                self.stopped = True
                break
            self.check(batch)
        return not self.stopped

    def check_finished(self) -> None:
        """After the stream: check the batches that completed, in order, up to the first one that did not."""
        while self.checked in self.ids and not self.stopped and self.plan.active():
            batch = self.checked
            if not self.batches.event(batch).is_set() or not self.batches.complete.get(batch):
                self.stopped = True
                break
            self.check(batch)

    def check(self, batch: int) -> None:
        """Read the batch's values, check every comparison, store the record."""
        start = self.ends[batch - 1] if batch else 0
        self.plan.add(self.runner.store, self.run_id, self.ids.pop(batch), start, self.total)
        self.plan.check(self.ends[batch])
        self.batches.forget(batch)
        self.checked = batch + 1
        self.save()

    def save(self) -> None:
        spec = {**self.runner.plan.spec(), "sequential": self.record()}
        self.runner.store.set_run_spec(self.run_id, json.dumps(spec))

    def record(self) -> dict[str, Any]:
        """What the run stores: samples processed per system are those of the complete batches given to it."""
        done = self.ends[self.checked - 1] if self.checked else 0
        for batch in range(self.checked, len(self.ends)):  # completed after the last check (the look-ahead)
            if not (self.batches.event(batch).is_set() and self.batches.complete.get(batch)):
                break
            done = self.ends[batch]
        return self.plan.record(self.total, {s: min(self.assigned.get(s, 0), done) for s in self.plan.systems})


def processing_clusters(spool: Any) -> list[str] | None:
    """Each sample's cluster (:attr:`ragassay.models.Sample.cluster`) in the processing order, or None when every
    sample is its own (one pass over the spool; only samples that name a conversation are parsed)."""
    clusters = []
    for question_id, raw in spool.records():
        conversation = json.loads(raw).get("conversation_id") if '"conversation_id"' in raw else None
        clusters.append(question_id if conversation is None else str(conversation))
    return clusters if len(set(clusters)) < len(clusters) else None


async def run_in_batches(runner: Any, run_id: str, built: dict, ledger: Any, summary: Any, *, reuse: bool) -> str:
    """Run ``runner``'s work as a pipelined sequential run (module docstring); store the record after every
    check. Returns the status: "settled" when every comparison settled with units left undone, else "complete"
    (the caller still marks a budget stop or an interruption)."""
    pipeline = Pipeline(runner, run_id, ledger, reuse=reuse)
    await runner.execute_items(run_id, built, pipeline.items(), ledger, summary, batches=pipeline.batches)
    pipeline.check_finished()
    record = pipeline.record()
    if pipeline.checked:
        pipeline.save()
    summary.sequential = record
    total = pipeline.total
    return "settled" if record["complete"] and min(record["judged"].values(), default=total) < total else "complete"
