"""Concurrency limits shared by every generator and judge that calls the same backend endpoint.

One limiter per (backend, endpoint) and event loop: two systems using ``gpt-4o-mini`` share one budget of
in-flight calls. When components declare different limits, the smallest wins (a provider's rate limit is a
property of the account, not of one component).
"""

from __future__ import annotations

import asyncio
import collections
import weakref


class Limiter:
    """At most ``limit`` holders at once (an async context manager); the limit can be lowered later."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError("concurrency limit must be at least 1")
        self.limit = limit
        self.active = 0
        self._waiters: collections.deque[asyncio.Future] = collections.deque()

    async def __aenter__(self) -> Limiter:
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
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.active -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                break


_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], Limiter]] = (
    weakref.WeakKeyDictionary()
)


def limiter_for(backend: str, endpoint: str, limit: int) -> Limiter:
    """The limiter of (backend, endpoint) in the running event loop, lowered to ``limit`` if smaller."""
    loop = asyncio.get_running_loop()
    table = _limiters.setdefault(loop, {})
    limiter = table.get((backend, endpoint))
    if limiter is None:
        limiter = table[(backend, endpoint)] = Limiter(limit)
    elif limit < limiter.limit:
        limiter.limit = limit
    return limiter
