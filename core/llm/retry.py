"""Retries: which failures are worth another attempt, how long to wait, when to give up.

* HTTP 429: wait what ``Retry-After`` (seconds or an HTTP date; or ``retry-after-ms``) asks, capped at
  ``max_retry_after_s``; without the header, back off like a 5xx.
* 408, 409, 5xx (and Anthropic's 529), timeouts, connection errors, malformed or truncated responses:
  exponential backoff ``min(max_backoff_s, backoff_s * 2**n)`` with "equal jitter" (half fixed, half
  uniformly random), so concurrent clients do not retry in lockstep.
* Anything else (400, 401, 403, 404, 422, ...) fails at once: retrying cannot help.

Retries are bounded by a deadline, not by a small count: no retry starts later than ``deadline_s`` after the
call's first failure (a backoff is shortened to end at the deadline; a ``Retry-After`` that ends past it gives
up at once, since retrying earlier than asked cannot help). A run of bad luck (five faults in a row at a 20%
fault rate) then costs seconds, not a sample. ``max_retries`` can bound the count as well. Then the call fails
with :class:`ProviderError` carrying the last reason and the number of attempts; the runner marks that sample
failed and carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import email.utils
import itertools
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
    """How patiently a backend retries: until ``deadline_s`` after the first failure and, when set, at most
    ``max_retries`` times (None: no count bound). ``timeout_s`` bounds each attempt (None: no bound).

    ``sleep`` and ``clock`` are how it waits and tells the time (tests pass their own).
    """

    max_retries: int | None = None
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    timeout_s: float | None = 60.0
    deadline_s: float | None = 120.0
    sleep: Callable[[float], Awaitable[Any]] = dataclasses.field(default=asyncio.sleep, compare=False, repr=False)
    clock: Callable[[], float] = dataclasses.field(default=time.monotonic, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_retries is None and self.deadline_s is None:
            raise ValueError("a retry policy needs a deadline_s or a max_retries: retries must end")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after_s))
        base = min(self.max_backoff_s, self.backoff_s * (2**retry))
        return base / 2 + random.uniform(0, base / 2)

    def next_wait(self, retry: int, error: RetryableError, spent: float) -> tuple[float | None, str]:
        """(seconds to wait before retry number ``retry``, "") or (None, why not) when it is time to give up;
        ``spent``: seconds since the call's first failure."""
        if self.max_retries is not None and retry >= self.max_retries:
            return None, ""
        wait = self.delay(retry, error.retry_after)
        if self.deadline_s is None:
            return wait, ""
        left = self.deadline_s - spent
        if error.retry_after is not None and wait > left:
            return None, f" (the server asked to wait {wait:g} s, past the retry deadline of {self.deadline_s:g} s)"
        if left <= 0:
            return None, f" in {spent:.0f} s (the retry deadline is {self.deadline_s:g} s)"
        return min(wait, left), ""


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
    Raises :class:`ProviderError` (message scrubbed of keys) on a permanent failure, or when the policy's
    deadline (or retry count) is used up.
    """
    first_failure: float | None = None
    for number in itertools.count(1):
        try:
            async with slot if slot is not None else contextlib.nullcontext():
                if policy.timeout_s is None:
                    return await attempt(), number
                return await _within(attempt(), policy.timeout_s), number
        except asyncio.TimeoutError:
            error = RetryableError(f"no response within {policy.timeout_s:g} s (timeout)")
        except RetryableError as exc:
            error = exc
        except ProviderError as exc:
            raise _failed(f"{label}: {exc}", number) from None
        now = policy.clock()
        first_failure = now if first_failure is None else first_failure
        wait, why = policy.next_wait(number - 1, error, now - first_failure)
        if wait is None:
            plural = "s" if number > 1 else ""
            raise _failed(f"{label}: {error.reason}; gave up after {number} attempt{plural}{why}", number)
        log.warning(scrub(f"{label}: {error.reason}; retry {number} in {wait:.2f} s"))
        await policy.sleep(wait)
    raise AssertionError("unreachable")


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
