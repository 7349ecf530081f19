"""Retry policy: which failures are retried, how long it waits (Retry-After, backoff with jitter), when it
gives up, and that what it reports carries no key."""

from __future__ import annotations

import asyncio
import email.utils
import time

import pytest

from ragassay.errors import ProviderError
from ragassay.llm.retry import RetryableError, RetryPolicy, call_with_retries, parse_retry_after, status_error


def test_backoff_doubles_with_equal_jitter_and_is_capped():
    policy = RetryPolicy(backoff_s=1.0, max_backoff_s=5.0)
    for retry, base in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (8, 5.0)]:
        delays = [policy.delay(retry) for _ in range(200)]
        assert all(base / 2 <= d <= base for d in delays)
        assert max(delays) - min(delays) > base / 10  # jittered, not lockstep


def test_retry_after_is_honoured_and_capped():
    policy = RetryPolicy(max_retry_after_s=10)
    assert policy.delay(0, retry_after=3.5) == 3.5
    assert policy.delay(5, retry_after=600) == 10


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after({"Retry-After": future}) <= 31
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


@pytest.mark.parametrize(
    "status,retryable",
    [
        (429, True),
        (500, True),
        (502, True),
        (503, True),
        (529, True),
        (408, True),
        (400, False),
        (401, False),
        (403, False),
        (404, False),
    ],
)
def test_status_classification(status, retryable):
    error = status_error(status, "m", {"Retry-After": "1"})
    assert isinstance(error, RetryableError if retryable else ProviderError)
    if retryable:
        assert error.retry_after == 1.0


def _flaky(failures):
    """An attempt function that raises the given failures in order, then returns 'ok'."""
    state = {"calls": 0}

    async def attempt():
        state["calls"] += 1
        if failures:
            failure = failures.pop(0)
            if isinstance(failure, float):
                await asyncio.sleep(failure)
            else:
                raise failure
        return "ok"

    return attempt, state


def test_transient_failures_are_retried_with_the_expected_count():
    attempt, state = _flaky([RetryableError("HTTP 500"), RetryableError("HTTP 503")])
    result, attempts = asyncio.run(call_with_retries(attempt, RetryPolicy(max_retries=3, backoff_s=0.001), "t"))
    assert (result, attempts, state["calls"]) == ("ok", 3, 3)


def test_gives_up_after_max_retries_with_the_last_reason():
    attempt, state = _flaky([RetryableError(f"HTTP 50{i}") for i in range(5)])
    with pytest.raises(ProviderError, match=r"t: HTTP 502; gave up after 3 attempts") as info:
        asyncio.run(call_with_retries(attempt, RetryPolicy(max_retries=2, backoff_s=0.001), "t"))
    assert state["calls"] == 3 and info.value.attempts == 3


def test_permanent_errors_are_not_retried():
    attempt, state = _flaky([ProviderError("HTTP 401: bad key sk-test-PLANTED-0123456789")])
    with pytest.raises(ProviderError) as info:
        asyncio.run(call_with_retries(attempt, RetryPolicy(max_retries=5, backoff_s=0.001), "t"))
    assert state["calls"] == 1 and "PLANTED-0123456789" not in str(info.value)


def test_a_stalled_attempt_times_out_and_is_retried():
    attempt, state = _flaky([5.0])
    start = time.perf_counter()
    result, attempts = asyncio.run(
        call_with_retries(attempt, RetryPolicy(max_retries=1, backoff_s=0.001, timeout_s=0.1), "t")
    )
    assert (result, attempts) == ("ok", 2) and time.perf_counter() - start < 1.0


def test_timeout_reason_is_clear():
    attempt, _ = _flaky([5.0, 5.0])
    with pytest.raises(ProviderError, match=r"no response within 0.05 s \(timeout\); gave up after 2 attempts"):
        asyncio.run(call_with_retries(attempt, RetryPolicy(max_retries=1, backoff_s=0.001, timeout_s=0.05), "t"))


def test_retry_after_wait_is_measured():
    attempt, _ = _flaky([RetryableError("HTTP 429", retry_after=0.3)])
    start = time.perf_counter()
    asyncio.run(call_with_retries(attempt, RetryPolicy(max_retries=1, backoff_s=0.001), "t"))
    assert 0.28 <= time.perf_counter() - start < 1.0
