"""The backend interface: one provider connection that makes exactly one attempt at one call.

Caching, concurrency limits, retries, structured-output checks and accounting are the client's job
(:class:`ragassay.llm.client.LLMClient`), so a backend only translates a :class:`LLMRequest` to its wire
format and the reply back, and reports transient failures as :class:`RetryableError`.
"""

from __future__ import annotations

import asyncio
import itertools
import weakref
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from .retry import RetryPolicy
from .types import LLMRequest, LLMResponse

C = TypeVar("C")


class LLMBackend:
    """Base class of backends. Subclasses set ``name`` and implement :meth:`complete`."""

    #: Backend name, the first part of the ``backend/model`` keys of usage and prices.
    name: ClassVar[str] = ""

    def __init__(self, model: str):
        self.model = model

    def identity(self) -> dict[str, Any]:
        """What, besides the request, determines a response (part of the cache key). Never a secret."""
        return {"backend": self.name, "model": self.model}

    def endpoint(self) -> str:
        """Where calls go (concurrency limits are shared per backend and endpoint)."""
        return ""

    @property
    def label(self) -> str:
        """How error messages name this backend: ``openai gpt-4o-mini``."""
        return f"{self.name} {self.model}"

    def retry_policy(self) -> RetryPolicy:
        """Retries and per-attempt timeout of this backend."""
        return RetryPolicy()

    def concurrency(self) -> int:
        """Most calls in flight at once for this backend and endpoint."""
        return 8

    def requests_per_minute(self) -> int | None:
        """Most call starts (attempts) in any 60-second window for this backend and endpoint; None: no bound."""
        return None

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Make one attempt. Return the response (usage filled in) or raise
        :class:`~ragassay.llm.retry.RetryableError` (transient) or :class:`~ragassay.ProviderError` (permanent).
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label}>"


class PerLoop(Generic[C]):
    """SDK clients per running event loop (their connections are bound to the loop that made them).

    ``shards`` clients are made per loop and handed out in turn: an HTTP connection pool checks every one of
    its connections on each request, so several small pools cost less CPU than one big one (about 25% less
    client CPU per call at 32 concurrent calls with 4 pools).
    """

    def __init__(self, factory: Callable[[], C], shards: int = 1):
        self._factory = factory
        self._shards = max(1, shards)
        self._turn = itertools.count()
        self._objects: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[C]] = weakref.WeakKeyDictionary()

    def get(self) -> C:
        loop = asyncio.get_running_loop()
        objects = self._objects.get(loop)
        if objects is None:
            objects = self._objects[loop] = [self._factory() for _ in range(self._shards)]
        return objects[next(self._turn) % self._shards]


def shards_for(concurrency: int, per_shard: int = 8) -> int:
    """How many HTTP clients to spread ``concurrency`` calls over."""
    return max(1, -(-concurrency // per_shard))
