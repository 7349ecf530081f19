"""The cluster-wide LLM budget: one Ray actor hands out every worker's rate-limit slots.

Without it each worker process has its own limiters, and 8 workers send 8x the configured ``concurrency`` (and
``requests_per_minute``) to a provider. With it, every call start in every worker takes its slot from one
:class:`LLMBudget` actor, per (backend, endpoint), first come first served across workers; the smallest limits
any caller declared apply, as within one process. How the executor wires it::

    budget = create_llm_budget()                       # on the driver, once per run
    # in each worker process, once at start (holder_id: unique per worker incarnation, e.g. its actor id):
    install_ray_budget(budget, holder_id)
    # when the driver sees a worker die:
    budget.release_holder.remote(holder_id)            # frees its slots; its late requests are refused

Cost per call: one actor round trip to acquire; the release is sent without waiting (it is kept until Ray
has it, and :meth:`RayBudget.drain` waits for the ones still pending). ``budget.stats.remote()`` reports per
key: limit, rpm, in flight, peak in flight, grants, waiting, and the most starts seen in one window.
Ray is imported on first use: this module imports without it.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import itertools
import logging
import time
from typing import Any

from ..llm.limits import WINDOW_S, Key, RateWindow, set_shared_budget

log = logging.getLogger("ragassay.distributed")

DEFAULT_NAME = "ragassay-llm-budget"


@dataclasses.dataclass
class _Waiter:
    holder: str
    future: asyncio.Future


@dataclasses.dataclass
class _KeyState:
    """Slots of one (backend, endpoint)."""

    limit: int
    window: RateWindow
    in_flight: int = 0
    peak: int = 0
    grants: int = 0
    most_in_window: int = 0
    waiters: collections.deque = dataclasses.field(default_factory=collections.deque)
    timer: asyncio.TimerHandle | None = None

    @property
    def rpm(self) -> int | None:
        return self.window.rpm if self.window.rpm > 0 else None


class LLMBudget:
    """Concurrency and requests-per-window slots per (backend, endpoint), shared by every worker.

    Run as a Ray async actor (see :func:`create_llm_budget`); every method runs on the actor's one event loop,
    so the state needs no locks. ``window_s`` is the rate window (60 s: ``rpm`` is per minute; tests shorten it).
    """

    def __init__(self, window_s: float = WINDOW_S):
        self.window_s = window_s
        self._keys: dict[Key, _KeyState] = {}
        self._tokens: dict[int, tuple[Key, str]] = {}
        self._numbers = itertools.count(1)
        self._dead: set[str] = set()

    async def acquire(self, key: Key, limit: int, rpm: int | None, holder: str) -> int:
        """Wait for a slot of ``key`` for worker ``holder``; returns the token to :meth:`release`."""
        if holder in self._dead:
            raise RuntimeError(f"LLM budget: worker {holder!r} was released as dead; it may not take slots")
        state = self._state(tuple(key), limit, rpm)
        future = asyncio.get_running_loop().create_future()
        state.waiters.append(_Waiter(holder, future))
        self._pump(tuple(key))
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(future.result())  # granted as the caller left: give it back
            raise

    def release(self, token: int) -> bool:
        """Give back the slot of ``token``; False if it was already free (released, or its holder died)."""
        entry = self._tokens.pop(token, None)
        if entry is None:
            return False
        state = self._keys[entry[0]]
        state.in_flight -= 1
        self._pump(entry[0])
        return True

    def release_holder(self, holder: str) -> int:
        """Free every slot ``holder`` (a dead worker) holds and drop its waiting requests; returns the slots freed.

        Later requests from ``holder`` are refused, so use a new holder id for a restarted worker.
        """
        self._dead.add(holder)
        for state in self._keys.values():
            for waiter in [w for w in state.waiters if w.holder == holder]:
                state.waiters.remove(waiter)
                waiter.future.cancel()
        tokens = sorted(t for t, (_, h) in self._tokens.items() if h == holder)
        for token in tokens:
            self.release(token)
        return len(tokens)

    def stats(self) -> dict[Key, dict[str, Any]]:
        """Per key: limit, rpm, in_flight, peak_in_flight, grants, waiting, most_starts_in_window."""
        return {
            key: {
                "limit": s.limit,
                "rpm": s.rpm,
                "in_flight": s.in_flight,
                "peak_in_flight": s.peak,
                "grants": s.grants,
                "waiting": len(s.waiters),
                "most_starts_in_window": s.most_in_window,
            }
            for key, s in sorted(self._keys.items())
        }

    def _state(self, key: Key, limit: int, rpm: int | None) -> _KeyState:
        if limit < 1 or (rpm is not None and rpm < 1):
            raise ValueError(f"LLM budget {key}: limits must be at least 1 (got concurrency {limit}, rpm {rpm})")
        state = self._keys.get(key)
        if state is None:
            # rpm 0 marks "no rate bound"; the window still counts starts for stats()
            state = self._keys[key] = _KeyState(limit, RateWindow(0, self.window_s, time.monotonic))
        state.limit = min(state.limit, limit)
        if rpm is not None:
            state.window.rpm = min(state.window.rpm, rpm) if state.rpm else rpm
        return state

    def _pump(self, key: Key) -> None:
        """Grant slots to the oldest waiters while both limits allow; if the window is full, come back later."""
        state = self._keys[key]
        while state.waiters and state.in_flight < state.limit:
            if state.waiters[0].future.done():  # its caller left
                state.waiters.popleft()
                continue
            wait = state.window.wait_s() if state.rpm else 0.0
            if wait > 0:
                if state.timer is None:
                    state.timer = asyncio.get_running_loop().call_later(wait, self._wake, key)
                return
            self._grant(key, state, state.waiters.popleft())

    def _wake(self, key: Key) -> None:
        self._keys[key].timer = None
        self._pump(key)

    def _grant(self, key: Key, state: _KeyState, waiter: _Waiter) -> None:
        token = next(self._numbers)
        self._tokens[token] = (key, waiter.holder)
        state.in_flight += 1
        state.peak = max(state.peak, state.in_flight)
        state.grants += 1
        state.window.prune()
        state.window.record()
        state.most_in_window = max(state.most_in_window, len(state.window.starts))
        waiter.future.set_result(token)


class RayBudget:
    """A worker's side of an :class:`LLMBudget` actor: the :class:`~ragassay.llm.limits.SharedBudget` that
    :func:`install_ray_budget` installs. ``holder_id`` names this worker to :meth:`LLMBudget.release_holder`."""

    def __init__(self, actor: Any, holder_id: str):
        self.actor, self.holder_id = actor, holder_id
        self._pending: set[Any] = set()  # releases sent, not yet done
        self._late: set[asyncio.Task] = set()

    async def acquire(self, key: Key, limit: int, rpm: int | None) -> int:
        """One actor round trip: wait for a slot, return its token."""
        ref = self.actor.acquire.remote(tuple(key), limit, rpm, self.holder_id)
        try:
            return await ref
        except asyncio.CancelledError:
            task = asyncio.ensure_future(self._release_when_granted(ref))  # the grant may still come
            self._late.add(task)
            task.add_done_callback(self._late.discard)
            raise

    async def release(self, token: int) -> None:
        """Send the release without waiting for it (kept until Ray has it; see :meth:`drain`)."""
        future = self.actor.release.remote(token).future()
        self._pending.add(future)
        future.add_done_callback(self._released)

    async def drain(self, timeout_s: float = 30.0) -> None:
        """Wait until every release sent has reached the actor (call before a worker exits on purpose)."""
        pending = [asyncio.wrap_future(f) for f in list(self._pending)] + list(self._late)
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)

    async def _release_when_granted(self, ref: Any) -> None:
        try:
            token = await ref
        except Exception:  # noqa: BLE001 - refused or actor gone: nothing was granted
            return
        await self.release(token)

    def _released(self, future: Any) -> None:
        self._pending.discard(future)
        if not future.cancelled() and future.exception() is not None:
            log.warning("LLM budget: a slot release failed: %s", future.exception())


def _ray() -> Any:
    from ..errors import require

    return require("ray", "ray", "the cluster-wide LLM budget")


def create_llm_budget(name: str | None = DEFAULT_NAME, window_s: float = WINDOW_S) -> Any:
    """Start the :class:`LLMBudget` actor (from the driver, after ``ray.init``); returns its handle.

    It is a named actor (``name``; None: unnamed) so workers may also find it with ``ray.get_actor(name)``;
    it takes no CPU and serves thousands of waiting requests at once.
    """
    ray = _ray()
    options: dict[str, Any] = {"max_concurrency": 10_000, "num_cpus": 0}
    if name is not None:
        options["name"] = name
    return ray.remote(LLMBudget).options(**options).remote(window_s)


def install_ray_budget(actor: Any, holder_id: str) -> RayBudget:
    """Make every LLM call of this process take its slots from ``actor`` (call once, at worker start)."""
    budget = RayBudget(actor, holder_id)
    set_shared_budget(budget)
    return budget
