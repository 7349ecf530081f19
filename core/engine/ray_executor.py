"""The Ray executor: a run's work items processed by worker actors on a Ray cluster.

``[project] executor = "ray"`` (or ``ragassay run --executor ray``). The driver (the ``ragassay run`` process)
plans the run, holds its lease, reads what the store already has and hands work to ``workers`` actors:

- each actor builds the systems, metrics and judges once (:class:`~ragassay.engine.processing.WorkerJob`), over the
  corpus the driver put in the object store once; the driver prepares every system first, so on-disk caches
  (dense embeddings, FAISS indexes) are built once and loaded by the workers;
- work goes out in batches of ``batch_size`` items, at most ``batches_in_flight`` per worker (backpressure: the
  driver never holds more than ``workers x batches_in_flight`` batches, whatever the run's size);
- results stream back as batches finish; the driver persists them, or with a server database
  (``write = "workers"``, the default for PostgreSQL) the workers write them and send back only a digest;
- LLM calls of every worker share one budget per backend (:mod:`ragassay.engine.ray_budget`);
- a worker that dies (a crashed process, a lost node) is replaced (up to ``max_worker_restarts``) and its
  batches in flight are redone; the store keys rows by (run, system, sample), so nothing is stored twice.

Ray is imported on first use (``pip install 'ragassay[ray]'``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import os
import re
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from ..errors import ConfigError, RagassayError
from .processing import ItemInputs, UnitDigest, WorkerJob, WorkItem

Batch = list[tuple[WorkItem, ItemInputs]]
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # the colour codes Ray puts in its error messages


class WorkerLostError(RagassayError):
    """Workers kept dying: more restarts than ``[project.ray] max_worker_restarts`` allow."""


class WorkerTaskError(RagassayError):
    """A batch raised in a worker (not a dead worker): the run stops with the cause in one line."""


def import_ray() -> Any:
    """The ``ray`` module, or a ConfigError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "[project] executor = 'ray' needs Ray: pip install 'ragassay[ray]' (or use executor = 'local')"
        ) from exc
    return ray


def connect(address: str | None) -> Any:
    """Join the cluster at ``address`` ($RAY_ADDRESS when None, else a local one started here), once."""
    ray = import_ray()
    _one_line_logs()
    if ray.is_initialized():
        return ray
    address = address or os.environ.get("RAY_ADDRESS") or None
    options: dict[str, Any] = {"configure_logging": False, "log_to_driver": False}
    if address is None:
        options["include_dashboard"] = False
    elif address.split("://")[-1].split(":")[0] in ("127.0.0.1", "localhost"):
        options["_node_ip_address"] = "127.0.0.1"  # a loopback cluster: this driver is on its node
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = address or "a new local cluster"
        raise ConfigError(
            f"[project.ray] address: cannot connect to the Ray cluster at {where}: {str(exc).splitlines()[0]}. "
            "Start it with 'ray start --head', check the address, and set RAY_AUTH_TOKEN if it uses token auth."
        ) from exc
    return ray


class _OneLine(logging.Filter):
    """Ray's own log records (it logs to stderr) as one line without colour codes: a crash report of Ray spans
    many coloured lines; the user sees its first line and how many more there were."""

    def filter(self, record: logging.LogRecord) -> bool:
        lines = _ANSI.sub("", record.getMessage()).strip().splitlines() or [""]
        record.msg = lines[0] + (f" [... {len(lines) - 1} more lines]" if len(lines) > 1 else "")
        record.args, record.exc_info, record.exc_text, record.stack_info = None, None, None, None
        return True


def _one_line_logs() -> None:
    """Put :class:`_OneLine` on the handlers of Ray's logger (once); where nothing handles its records (Python's
    last resort would print them whole), a stderr handler for its warnings and errors first."""
    ray_logger = logging.getLogger("ray")
    if not ray_logger.hasHandlers():
        ray_logger.addHandler(logging.StreamHandler())
        ray_logger.handlers[-1].setLevel(logging.WARNING)
    for handler in ray_logger.handlers:
        if not any(isinstance(f, _OneLine) for f in handler.filters):
            handler.addFilter(_OneLine())


class _Worker:
    """One worker actor: a :class:`~ragassay.engine.processing.UnitProcessor` built once, fed batches."""

    def __init__(self, job: WorkerJob, corpus: Any, budget: Any, holder: str):
        self.holder = holder
        if budget is not None:
            from .ray_budget import install_ray_budget

            install_ray_budget(budget, holder)
        self.job = job
        self.processor = job.build(corpus)
        self.store = None
        if job.store_url is not None:
            from ..store import open_store

            self.store = open_store(job.store_url, create=False, retry_s=job.store_retry_s)

    def ready(self) -> dict[str, Any]:
        """Who this worker is: its process id, the id of the Ray node it runs on, its budget holder id, and how
        long its own results store retries transient errors (``None``: it does not write)."""
        import ray

        retry_s = self.job.store_retry_s if self.store is not None else None  # what the store was opened with
        node = ray.get_runtime_context().get_node_id()
        return {"pid": os.getpid(), "node": node, "holder": self.holder, "store_retry_s": retry_s}

    async def process(self, batch: Batch) -> tuple[list[Any], bool]:
        """Process a batch, at most ``concurrency`` items at once; results, or digests when stored here."""
        limit = asyncio.Semaphore(self.job.concurrency)

        async def one(item: WorkItem, inputs: ItemInputs):
            async with limit:
                return await self.processor.process(item, inputs)

        results = [r for rs in await asyncio.gather(*(one(item, inputs) for item, inputs in batch)) for r in rs]
        if self.store is None:
            return results, False
        self.store.write_units(self.job.run_id, results, self.job.write_context, replace_existing=True)
        return [UnitDigest.of(result) for result in results], True

    def warnings(self) -> list[str]:
        """Warnings the worker's components raised (the driver adds the new ones to the run's)."""
        return list(self.job.context.warnings)

    async def close(self) -> None:
        for rag in {id(r): r for r in self.processor.systems.values() if hasattr(r, "aclose")}.values():
            await rag.aclose()
        if self.store is not None:
            self.store.close()


@dataclasses.dataclass
class _Slot:
    """A live worker actor and what it is working on."""

    index: int
    actor: Any
    holder: str
    pid: int = 0
    node: str = ""
    in_flight: int = 0


class RayExecutor:
    """Processes work items on Ray worker actors (see the module docstring); ``options``: ``[project.ray]``."""

    def __init__(self, options: Any, *, workers_can_write: bool = True, concurrent: bool = False):
        """``workers_can_write``: the results store gives workers a URL to open; ``concurrent``: it takes many
        writers well (a server database), so ``write = "auto"`` lets the workers write."""
        if options.write == "workers" and not workers_can_write:
            from ..errors import ConfigError

            raise ConfigError(
                '[project.ray] write = "workers", but workers cannot open this results store (it lives in this '
                'process). Set write = "driver" or "auto", or use a database server for [project] results.'
            )
        self.options = options
        self.writes_in_workers = workers_can_write and (
            options.write == "workers" or (options.write == "auto" and concurrent)
        )
        self.warnings: list[str] = []
        self.worker_pids: list[int] = []  # live workers' process ids (tests kill one)
        self.worker_nodes: list[str] = []  # the Ray node id of each live worker (tests remove a node)
        self.worker_store_retry_s: list[float | None] = []  # each started worker's results_retry_s (None: not writing)
        self.restarts = 0
        self.budget: Any = None
        connect(options.address)  # here, in the caller's (main) thread: Ray sets signal handlers when it joins

    async def process(self, job: WorkerJob, work: Iterable[tuple[WorkItem, ItemInputs]]) -> AsyncIterator:
        """Yield ``(results, stored)`` per finished batch: unit results, or digests when workers stored them."""
        batches = _batches(work, self.options.batch_size)
        first = next(batches, None)
        if first is None:
            return  # nothing left to do: no workers, no budget actor
        batches = itertools.chain([first], batches)
        ray = connect(self.options.address)
        self._check_capacity(ray)
        job = dataclasses.replace(job, store_url=job.store_url if self.writes_in_workers else None)
        self.budget = _start_budget()
        corpus = ray.put(job.corpus)  # once: every worker reads the same object
        job = dataclasses.replace(job, corpus=None)
        remote = ray.remote(_Worker)
        slots = [self._spawn(ray, remote, job, corpus, i) for i in range(self.options.workers)]
        await self._wait_ready(ray, slots)
        retry: list[Batch] = []
        pending: dict[asyncio.Future, tuple[_Slot, Batch]] = {}
        try:
            while True:
                self._submit(slots, pending, batches, retry)
                if not pending:
                    break
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    slot, batch = pending.pop(future)
                    slot.in_flight -= 1
                    outcome = await self._outcome(ray, future, slot, batch, slots, remote, job, corpus, retry)
                    if outcome is not None:
                        yield outcome
        finally:
            await self._shutdown(ray, slots, pending)

    def _check_capacity(self, ray: Any) -> None:
        """Workers that cannot all be placed would wait forever: an error on a cluster that cannot grow."""
        need = self.options.workers * self.options.cpus_per_worker
        have = ray.cluster_resources().get("CPU", 0)
        if need <= have:
            return
        message = (
            f"[project.ray] workers x cpus_per_worker = {need:g} CPUs, but the Ray cluster has {have:g}: lower "
            "workers or cpus_per_worker (work that waits on LLM calls needs little CPU, e.g. 0.25)"
        )
        if self.options.address is None and not os.environ.get("RAY_ADDRESS"):
            raise ConfigError(message)
        self.warnings.append(message + "; the workers that do not fit wait until the cluster grows")

    def _spawn(self, ray: Any, remote: Any, job: WorkerJob, corpus: Any, index: int) -> _Slot:
        holder = f"worker-{index}-{uuid.uuid4().hex[:8]}"
        actor = remote.options(num_cpus=self.options.cpus_per_worker, max_restarts=0, max_concurrency=1000).remote(
            job, corpus, self.budget, holder
        )
        return _Slot(index, actor, holder)

    async def _wait_ready(self, ray: Any, slots: list[_Slot]) -> None:
        for slot in slots:
            try:
                info = await slot.actor.ready.remote()
            except ray.exceptions.RayActorError as exc:
                raise RagassayError(f"a Ray worker could not start: {_cause(exc)}") from None
            slot.pid, slot.node = info["pid"], info["node"]
            self.worker_store_retry_s.append(info["store_retry_s"])
        self.worker_pids = [slot.pid for slot in slots]
        self.worker_nodes = [slot.node for slot in slots]

    def _submit(self, slots: list[_Slot], pending: dict, batches: Iterator[Batch], retry: list[Batch]) -> None:
        """Fill every worker up to ``batches_in_flight`` (redone batches first)."""
        for slot in sorted(slots, key=lambda s: s.in_flight):
            while slot.in_flight < self.options.batches_in_flight:
                batch = retry.pop(0) if retry else next(batches, None)
                if batch is None:
                    return
                future = asyncio.wrap_future(slot.actor.process.remote(batch).future())
                pending[future] = (slot, batch)
                slot.in_flight += 1

    async def _outcome(self, ray, future, slot, batch, slots, remote, job, corpus, retry) -> tuple | None:
        """A finished batch's results; a dead worker's batch is queued again and the worker replaced."""
        try:
            return future.result()
        except ray.exceptions.RayTaskError as exc:  # a bug or an unpicklable result: Ray's banner stays out
            raise WorkerTaskError(
                f"a Ray worker failed on a batch: {_cause(exc)}. Re-run with --debug for the worker's traceback."
            ) from exc
        except ray.exceptions.RayActorError as exc:
            retry.append(batch)
            if slot in slots:
                await self._replace(ray, slot, slots, remote, job, corpus, exc)
            return None

    async def _replace(self, ray, slot, slots, remote, job, corpus, exc) -> None:
        if self.budget is not None:
            self.budget.release_holder.remote(slot.holder)
        self.restarts += 1
        if self.restarts > self.options.max_worker_restarts:
            raise WorkerLostError(
                f"Ray workers died {self.restarts} times (last: {_cause(exc)}); the run stops here and a re-run "
                "resumes it. Raise [project.ray] max_worker_restarts if workers die for a known reason."
            )
        self.warnings.append(f"a Ray worker (pid {slot.pid}) died: {_cause(exc)}; its units were redone")
        fresh = self._spawn(ray, remote, job, corpus, slot.index)
        await self._wait_ready(ray, [fresh])
        slots[slots.index(slot)] = fresh
        self.worker_pids = [s.pid for s in slots]
        self.worker_nodes = [s.node for s in slots]

    async def _shutdown(self, ray: Any, slots: list[_Slot], pending: dict) -> None:
        for future in pending:
            future.cancel()
        for slot in slots:
            try:
                self.warnings += [w for w in await slot.actor.warnings.remote() if w not in self.warnings]
                await slot.actor.close.remote()
            except Exception:  # noqa: BLE001 - a dead worker has nothing to close
                pass
            ray.kill(slot.actor)
        if self.budget is not None:
            ray.kill(self.budget)


def _batches(work: Iterable[tuple[WorkItem, ItemInputs]], size: int) -> Iterator[Batch]:
    iterator = iter(work)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _start_budget() -> Any:
    """The cluster-wide LLM budget actor every worker takes its call slots from (one per run: unnamed)."""
    from .ray_budget import create_llm_budget

    return create_llm_budget(name=None)


def _cause(exc: BaseException) -> str:
    """One line without Ray's colour codes: the innermost cause of a Ray error (``TypeError: ...``), else its
    first line."""
    prefix = ""
    while isinstance(getattr(exc, "cause", None), BaseException) and exc.cause is not exc:
        exc = exc.cause
        prefix = f"{type(exc).__name__}: "
    text = _ANSI.sub("", str(exc)).strip()
    return (prefix + text.splitlines()[0])[:300] if text else type(exc).__name__
