"""LLMClient: the one path every model call takes.

    cache lookup -> (identical call in flight? wait for it) -> retries around the backend's single attempt,
    each attempt within the rate limits (concurrency, requests per minute) -> accounting (usage per
    backend/model, cost) -> cache store
    -> structured output / forced tool check, with bounded corrective retries.

A response served from the cache keeps its token counts but has ``calls == 0`` and ``cache_hits == 1``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..errors import ProviderError, RagassayError
from ..models import TokenUsage
from .backend import LLMBackend
from .budget import current as current_budget
from .cache_keys import cache_key, canonical
from .keys import scrub
from .limits import limiter_for
from .meter import record as record_usage
from .pricing import PriceTable
from .repeats import current_repeat
from .retry import call_with_retries
from .structured import StructuredOutputError, check_tool_calls, feedback, parse_model
from .types import ChatMessage, DecodingParams, LLMRequest, LLMResponse, ToolSpec

if TYPE_CHECKING:
    from .cache import ResponseCache


@dataclasses.dataclass
class CallStats:
    """What a client did: model calls (attempts included), responses served from the cache, failures."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0


@functools.lru_cache(maxsize=256)
def _json_schema(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema())


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema, built once per class (pydantic takes about 1 ms to build one); a fresh copy."""
    return json.loads(_json_schema(model))


_inflight: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Future]] = weakref.WeakKeyDictionary()


class LLMClient:
    """Calls ``backend`` through the cache, the shared rate limits and the retry policy."""

    def __init__(
        self,
        backend: LLMBackend,
        *,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        structured_retries: int = 2,
    ):
        self.backend = backend
        self.cache = cache
        self.prices = prices or PriceTable()
        self.structured_retries = structured_retries
        self.policy = backend.retry_policy()
        self.stats = CallStats()
        self._identity = canonical(backend.identity())  # part of every cache key

    async def chat(
        self,
        messages: Sequence[ChatMessage | dict[str, Any]],
        *,
        tools: Sequence[ToolSpec | type[BaseModel]] = (),
        tool_choice: str | None = None,
        response_model: type[BaseModel] | None = None,
        params: DecodingParams | dict | None = None,
        sample_index: int = 0,
    ) -> LLMResponse:
        """Send ``messages``; returns text, tool calls, or (with ``response_model``) a validated object in
        ``parsed``. ``tool_choice``: 'auto', 'none', 'required' or a tool name (forced call)."""
        request = LLMRequest(
            messages=[ChatMessage.coerce(m) for m in messages],
            tools=[t if isinstance(t, ToolSpec) else ToolSpec.from_model(t) for t in tools],
            tool_choice=tool_choice,
            response_schema=_schema(response_model) if response_model else None,
            response_name=response_model.__name__ if response_model else "response",
            params=params if isinstance(params, DecodingParams) else DecodingParams.model_validate(params or {}),
            sample_index=sample_index,
            repeat=current_repeat(),
        )
        return await self.complete_checked(request, response_model)

    async def complete_checked(self, request: LLMRequest, response_model: type[BaseModel] | None = None) -> LLMResponse:
        """:meth:`complete`, then validate structured output / forced tool calls, re-asking with the error."""
        response = await self.complete(request)
        usage = response.usage
        for attempt in range(self.structured_retries + 1):
            try:
                if response_model is not None:
                    parsed = parse_model(response.text, response_model)
                    return self._finish(response, usage, parsed=parsed)
                check_tool_calls(request, response)
                return self._finish(response, usage)
            except StructuredOutputError as exc:
                if attempt == self.structured_retries:
                    self.stats.failures += 1
                    record_usage(usage)  # the replies were paid for, even though none was usable
                    error = ProviderError(
                        scrub(
                            f"{self.backend.label}: {exc}; gave up after {attempt + 1} repl{'ies' if attempt else 'y'}"
                        )
                    )
                    error.raw = scrub(response.text or "")  # the last reply, for judges that store it
                    raise error from None
                request = feedback(request, response, exc)
                response = await self.complete(request)
                usage = usage + response.usage
        raise AssertionError("unreachable")

    def _finish(self, response: LLMResponse, usage: TokenUsage, parsed: Any = None) -> LLMResponse:
        """``response`` (a private copy) with the usage of every attempt, its cost and the parsed object; the
        usage is recorded in the open evaluation meter (see :mod:`ragassay.llm.meter`)."""
        if usage is not response.usage:
            response.usage, response.cost_usd = usage, self.prices.cost(usage)
        response.parsed = parsed
        record_usage(response.usage)
        return response

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One logical call: from the cache, or through the limit and the retries; accounted."""
        if self.cache is None:
            return await self._call(request)
        key = cache_key(self._identity, request)
        hit = self.cache.get(key)
        if hit is not None:
            self.stats.cache_hits += 1
            return self._from_cache(hit)
        table = _inflight.setdefault(asyncio.get_running_loop(), {})
        pending = table.get(key)
        if pending is not None:  # the same call is in flight: share its answer
            response = await asyncio.shield(pending)
            self.stats.cache_hits += 1
            return self._from_cache(response.model_copy(update={"cached": True}, deep=True))
        future = table[key] = asyncio.get_running_loop().create_future()
        try:
            response = await self._call(request)
            self.cache.put(key, self.backend.name, response)
            future.set_result(response.model_copy(deep=True))  # waiters get their own copy to finish
            return response
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters (if any) re-raise it
            raise
        finally:
            table.pop(key, None)

    async def _call(self, request: LLMRequest) -> LLMResponse:
        label = self.backend.label
        backend = self.backend
        limiter = limiter_for(backend.name, backend.endpoint(), backend.concurrency(), backend.requests_per_minute())
        attempt = functools.partial(self._attempt, request)
        try:
            response, attempts = await call_with_retries(attempt, self.policy, label, limiter)
        except RagassayError as exc:
            self.stats.failures += 1
            self.stats.calls += getattr(exc, "attempts", 1)
            raise
        except Exception as exc:  # noqa: BLE001 - an unmapped SDK error: report it without secrets
            self.stats.failures += 1
            self.stats.calls += 1
            raise ProviderError(scrub(f"{label}: {type(exc).__name__}: {exc}")) from None
        self.stats.calls += attempts
        self.stats.retries += attempts - 1
        return self._account(response, calls=1, hits=0)

    async def _attempt(self, request: LLMRequest) -> LLMResponse:
        """One attempt at the backend, within the session's budget if it has one (:mod:`ragassay.llm.budget`:
        a refused attempt raises :class:`~ragassay.llm.budget.BudgetExhausted` and is never sent)."""
        budget = current_budget()
        if budget is None:
            return await self.backend.complete(request)
        ticket = budget.reserve(request, f"{self.backend.name}/{self.backend.model}")
        usage = None
        try:
            response = await self.backend.complete(request)
            usage = response.usage
            return response
        finally:
            budget.settle(ticket, usage)

    def _from_cache(self, response: LLMResponse) -> LLMResponse:
        return self._account(response, calls=0, hits=1)

    def _account(self, response: LLMResponse, *, calls: int, hits: int) -> LLMResponse:
        """Stamp usage (in place: ``response`` is this call's own object) with the call count and a
        per-model breakdown, and price it."""
        u = response.usage
        counts = {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cached_tokens": u.cached_tokens,
            "reasoning_tokens": u.reasoning_tokens,
            "calls": calls,
            "cache_hits": hits,
        }
        key = f"{self.backend.name}/{response.model or self.backend.model}"
        response.usage = TokenUsage(**counts, by_model={key: TokenUsage(**counts)})
        response.cost_usd = self.prices.cost(response.usage)
        return response
