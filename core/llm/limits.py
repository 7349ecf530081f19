"""Rate limits shared by every generator and judge that calls the same backend endpoint.

Two limits per (backend, endpoint): ``concurrency`` calls in flight, and (optionally) ``requests_per_minute``
call starts in any sliding 60-second window. Every attempt counts: a retry is a new start and takes its slot
again (a call waiting out its backoff holds no slot). When components declare different limits, the smallest
wins (a provider's rate limit is a property of the account, not of one component).

Per process, one :class:`Limiter` per (backend, endpoint) and event loop. Across processes (the Ray executor's
workers), a :class:`SharedBudget` installed with :func:`set_shared_budget` takes the place of the local
limiters: :func:`limiter_for` then hands out slots from it, so every caller is covered without change::

    set_shared_budget(my_budget)      # once per process, before the first call; None uninstalls it
    async with limiter_for("openai", "https://api.openai.com/v1", 8, rpm=500):
        ...                           # one attempt
"""

from __future__ import annotations

import asyncio
import collections
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

Key = tuple[str, str]  # (backend name, endpoint)
WINDOW_S = 60.0


class SharedBudget(Protocol):
    """Slots for (backend, endpoint) shared by several processes; see :mod:`ragassay.engine.ray_budget`.

    ``acquire`` waits (first come, first served) until a call may start under both ``limit`` (calls in flight)
    and ``rpm`` (starts per minute; None: no bound), counts the start, and returns a token; the smallest limits
    any caller declared for ``key`` apply. ``release(token)`` gives the slot back.
    """

    async def acquire(self, key: Key, limit: int, rpm: int | None) -> Any: ...

    async def release(self, token: Any) -> None: ...


class RateWindow:
    """At most ``rpm`` starts in any sliding window of ``window_s`` seconds on ``clock``."""

    def __init__(self, rpm: int, window_s: float = WINDOW_S, clock: Callable[[], float] = time.monotonic):
        self.rpm, self.window_s, self.clock = rpm, window_s, clock
        self.starts: collections.deque[float] = collections.deque()

    def prune(self) -> float:
        """Forget the starts that left the window; returns the current time."""
        now = self.clock()
        while self.starts and self.starts[0] <= now - self.window_s:
            self.starts.popleft()
        return now

    def wait_s(self) -> float:
        """Seconds until one more start fits (0: now): until the oldest start in a full window leaves it."""
        now = self.prune()
        if len(self.starts) < self.rpm:
            return 0.0
        return self.starts[-self.rpm] + self.window_s - now

    def record(self) -> None:
        self.starts.append(self.clock())


class Limiter:
    """At most ``limit`` holders at once and, with ``rpm``, at most ``rpm`` entries per ``window_s`` (an async
    context manager; each entry is one call start). Both limits can be lowered later; waiters are served FIFO.
    ``clock`` and ``sleep`` are injectable, so tests need not wait a minute."""

    def __init__(
        self,
        limit: int,
        rpm: int | None = None,
        *,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ):
        if limit < 1 or (rpm is not None and rpm < 1):
            raise ValueError("concurrency and requests-per-minute limits must be at least 1")
        self.limit = limit
        self.active = 0
        self.window = RateWindow(rpm, window_s, clock) if rpm is not None else None
        self._window_s, self._clock, self._sleep = window_s, clock, sleep
        self._waiters: collections.deque[asyncio.Future] = collections.deque()
        self._pacing: asyncio.Lock | None = None

    @property
    def rpm(self) -> int | None:
        return self.window.rpm if self.window else None

    def lower(self, limit: int, rpm: int | None = None) -> None:
        """Apply the smaller of the current and the given limits (``rpm=None`` leaves the rate as it is)."""
        self.limit = min(self.limit, limit)
        if rpm is not None:
            if self.window is None:
                self.window = RateWindow(rpm, self._window_s, self._clock)
            self.window.rpm = min(self.window.rpm, rpm)

    async def __aenter__(self) -> Limiter:
        await self._take_slot()
        try:
            await self._pace()
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.active -= 1
        self._wake()

    async def _take_slot(self) -> None:
        while self.active >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif not waiter.cancelled():
                    self._wake()  # we were woken but leave: pass the turn on
                raise
        self.active += 1

    async def _pace(self) -> None:
        """Wait (FIFO, one sleeper at a time) until the rate window has room, then count this start."""
        if self.window is None:
            return
        if self._pacing is None:
            self._pacing = asyncio.Lock()
        async with self._pacing:
            wait = self.window.wait_s()
            while wait > 0:
                await self._sleep(wait)
                wait = self.window.wait_s()
            self.window.record()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                break


class SharedSlot:
    """One caller's slots from the installed :class:`SharedBudget` (an async context manager, re-enterable
    in turn by several tasks: each task's token is kept apart)."""

    def __init__(self, budget: SharedBudget, key: Key, limit: int, rpm: int | None):
        self.budget, self.key, self.limit, self.rpm = budget, key, limit, rpm
        self._tokens: dict[asyncio.Task | None, list[Any]] = {}

    async def __aenter__(self) -> SharedSlot:
        token = await self.budget.acquire(self.key, self.limit, self.rpm)
        self._tokens.setdefault(asyncio.current_task(), []).append(token)
        return self

    async def __aexit__(self, *exc: object) -> None:
        task = asyncio.current_task()
        tokens = self._tokens[task]
        token = tokens.pop()
        if not tokens:
            del self._tokens[task]
        await self.budget.release(token)


_shared: SharedBudget | None = None
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Key, Limiter]] = weakref.WeakKeyDictionary()


def set_shared_budget(budget: SharedBudget | None) -> None:
    """Install ``budget`` for this whole process (every thread and event loop), or uninstall it with None.

    While one is installed, :func:`limiter_for` takes every slot from it instead of the per-loop limiters. A
    Ray worker installs one at start with :func:`ragassay.engine.ray_budget.install_ray_budget`.
    """
    global _shared
    _shared = budget


def shared_budget() -> SharedBudget | None:
    """The budget installed with :func:`set_shared_budget`, or None (limits are then per process)."""
    return _shared


def limiter_for(backend: str, endpoint: str, limit: int, rpm: int | None = None) -> Limiter | SharedSlot:
    """The slots of (backend, endpoint): one attempt per ``async with``.

    With a shared budget installed, a :class:`SharedSlot` from it; otherwise the limiter of the running event
    loop, lowered to ``limit`` and ``rpm`` where they are smaller.
    """
    if _shared is not None:
        return SharedSlot(_shared, (backend, endpoint), limit, rpm)
    loop = asyncio.get_running_loop()
    table = _limiters.setdefault(loop, {})
    limiter = table.get((backend, endpoint))
    if limiter is None:
        limiter = table[(backend, endpoint)] = Limiter(limit, rpm)
    else:
        limiter.lower(limit, rpm)
    return limiter
