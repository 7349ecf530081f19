"""Retries: which failures are worth another attempt, how long to wait, when to give up.

* HTTP 429: wait what ``Retry-After`` (or ``retry-after-ms``) asks, capped at ``max_retry_after_s``;
  without the header, back off like a 5xx.
* 408, 409, 5xx (and Anthropic's 529), timeouts, connection errors, malformed or truncated responses:
  exponential backoff ``min(max_backoff_s, backoff_s * 2**n)`` with "equal jitter" (half fixed, half
  uniformly random), so concurrent clients do not retry in lockstep.
* Anything else (400, 401, 403, 404, 422, ...) fails at once: retrying cannot help.

After ``max_retries`` retries the call fails with :class:`ProviderError` carrying the last reason and the
number of attempts; the runner then marks that sample failed and carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from ..errors import ProviderError
from .keys import scrub

T = TypeVar("T")
log = logging.getLogger("ragassay.llm")

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class RetryableError(Exception):
    """A transient failure: the call may succeed if tried again (after ``retry_after`` seconds if given)."""

    def __init__(self, reason: str, *, retry_after: float | None = None, status: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.status = status


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a backend retries. ``timeout_s`` bounds each attempt (None: no bound)."""

    max_retries: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    timeout_s: float | None = 60.0

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after_s))
        base = min(self.max_backoff_s, self.backoff_s * (2**retry))
        return base / 2 + random.uniform(0, base / 2)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date); None if absent or bad."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        seconds = _number(lowered["retry-after-ms"])
        if seconds is not None:
            return seconds / 1000
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _number(value: str) -> float | None:
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def status_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Exception:
    """A :class:`RetryableError` for retryable HTTP statuses, else a :class:`ProviderError`."""
    if status in RETRYABLE_STATUS or status >= 500:
        return RetryableError(f"HTTP {status}: {message}", retry_after=parse_retry_after(headers), status=status)
    return ProviderError(f"HTTP {status}: {message}")


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]], policy: RetryPolicy, label: str, slot: Any = None
) -> tuple[T, int]:
    """Run ``attempt`` until it succeeds; returns (result, attempts made).

    ``slot`` (an async context manager, e.g. a :func:`~ragassay.llm.limits.limiter_for` limiter) is entered
    around each attempt, outside its timeout: every attempt is one start under the rate limits, and a call
    waiting out its backoff holds no slot.
    Raises :class:`ProviderError` (message scrubbed of keys) on a permanent failure or after the last retry.
    """
    for number in range(policy.max_retries + 1):
        try:
            async with slot if slot is not None else contextlib.nullcontext():
                if policy.timeout_s is None:
                    return await attempt(), number + 1
                return await _within(attempt(), policy.timeout_s), number + 1
        except asyncio.TimeoutError:
            error = RetryableError(f"no response within {policy.timeout_s:g} s (timeout)")
        except RetryableError as exc:
            error = exc
        except ProviderError as exc:
            raise _failed(f"{label}: {exc}", number + 1) from None
        if number == policy.max_retries:
            break
        wait = policy.delay(number, error.retry_after)
        log.warning(scrub(f"{label}: {error.reason}; retry {number + 1}/{policy.max_retries} in {wait:.2f} s"))
        await asyncio.sleep(wait)
    attempts = policy.max_retries + 1
    raise _failed(f"{label}: {error.reason}; gave up after {attempts} attempt{'s' if attempts > 1 else ''}", attempts)


async def _within(coroutine: Awaitable[T], seconds: float) -> T:
    """``await coroutine`` with a deadline (``asyncio.timeout`` where available: no extra task per call)."""
    if hasattr(asyncio, "timeout"):
        async with asyncio.timeout(seconds):
            return await coroutine
    return await asyncio.wait_for(coroutine, seconds)  # pragma: no cover - Python 3.10


def _failed(message: str, attempts: int) -> ProviderError:
    """A scrubbed ProviderError that remembers how many attempts were made."""
    error = ProviderError(scrub(message))
    error.attempts = attempts
    return error
