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
    attempt, state = _flaky([60.0])  # far longer than any slow machine needs for the rest
    start = time.perf_counter()
    result, attempts = asyncio.run(
        call_with_retries(attempt, RetryPolicy(max_retries=1, backoff_s=0.001, timeout_s=0.1), "t")
    )
    assert (result, attempts) == ("ok", 2) and time.perf_counter() - start < 30  # the stall was abandoned


def test_timeout_reason_is_clear():
    attempt, _ = _flaky([5.0, 5.0])
    with pytest.raises(ProviderError, match=r"no response within 0.05 s \(timeout\); gave up after 2 attempts"):
        asyncio.run(call_with_retries(attempt, RetryPolicy(max_retries=1, backoff_s=0.001, timeout_s=0.05), "t"))


def test_retry_after_wait_is_measured():
    attempt, _ = _flaky([RetryableError("HTTP 429", retry_after=0.3)])
    start = time.perf_counter()
    asyncio.run(call_with_retries(attempt, RetryPolicy(max_retries=1, backoff_s=0.001), "t"))
    assert 0.28 <= time.perf_counter() - start < 10  # waited as asked, far from the 120 s cap


# -- a deadline, not a small count --------------------------------------------------------------------------------


class FakeTime:
    """A clock and a sleep for the policy: sleeping moves the clock, nothing waits for real."""

    def __init__(self):
        self.now, self.slept = 1000.0, []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _policy(fake: FakeTime, **options) -> RetryPolicy:
    return RetryPolicy(**{"backoff_s": 1.0, "max_backoff_s": 8.0, **options}, sleep=fake.sleep, clock=fake.clock)


def test_a_long_run_of_faults_is_outlasted_by_default():
    """Ten faults in a row (a count of 4 retries used to lose the call) fit well inside the 120 s deadline."""
    fake = FakeTime()
    attempt, state = _flaky([RetryableError("HTTP 500") for _ in range(10)])
    result, attempts = asyncio.run(call_with_retries(attempt, _policy(fake), "t"))
    assert (result, attempts, state["calls"]) == ("ok", 11, 11)
    assert RetryPolicy().max_retries is None and RetryPolicy().deadline_s == 120.0


def test_retries_stop_at_the_deadline_with_the_reason():
    fake = FakeTime()
    attempt, state = _flaky([RetryableError("HTTP 503") for _ in range(1000)])
    with pytest.raises(
        ProviderError, match=r"t: HTTP 503; gave up after \d+ attempts in 60 s \(the retry deadline"
    ) as info:
        asyncio.run(call_with_retries(attempt, _policy(fake, deadline_s=60.0), "t"))
    assert sum(fake.slept) == pytest.approx(60.0)  # the last backoff is cut to end at the deadline
    assert info.value.attempts == state["calls"] == len(fake.slept) + 1
    assert max(fake.slept) <= 8.0


def test_retry_after_is_honoured_in_seconds_and_as_an_http_date():
    fake = FakeTime()
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    failures = [status_error(429, "slow down", {"Retry-After": "7"}), status_error(429, "later", {"Retry-After": date})]
    attempt, state = _flaky(failures)
    result, attempts = asyncio.run(call_with_retries(attempt, _policy(fake), "t"))
    assert (result, attempts) == ("ok", 3)
    assert fake.slept[0] == 7.0 and 28 <= fake.slept[1] <= 31


def test_a_retry_after_past_the_deadline_gives_up_at_once():
    fake = FakeTime()
    attempt, state = _flaky([status_error(429, "quota", {"Retry-After": "300"})])
    with pytest.raises(
        ProviderError, match=r"gave up after 1 attempt \(the server asked to wait 120 s, past the retry"
    ):
        asyncio.run(call_with_retries(attempt, _policy(fake, deadline_s=100.0), "t"))
    assert fake.slept == [] and state["calls"] == 1  # capped at max_retry_after_s = 120, still past 100


def test_max_retries_still_bounds_the_count_when_set():
    fake = FakeTime()
    attempt, state = _flaky([RetryableError("HTTP 500") for _ in range(5)])
    with pytest.raises(ProviderError, match="gave up after 3 attempts$"):
        asyncio.run(call_with_retries(attempt, _policy(fake, max_retries=2), "t"))
    with pytest.raises(ValueError, match="needs a deadline_s or a max_retries"):
        RetryPolicy(deadline_s=None)


# -- a judge at a loopback model that fails 20% of the calls -----------------------------------------------------

N_ANSWERS = 60


def _faulty_fact_checker():
    """Replies of a fact-checker where 20% of the attempts fail (429 with Retry-After or 500), decided per
    (segment, attempt) so the script is the same whatever the order; segment 0 fails its first six attempts,
    one more than the old count of four retries allowed."""
    import json
    import random
    import threading

    from servers.openai_chat import Turn, rate_limited, server_error

    attempts: dict[str, int] = {}
    lock = threading.Lock()

    def reply(request):
        text = json.loads(next(m["content"] for m in request.json["messages"] if m["role"] == "user"))["text"]
        with lock:
            attempt = attempts[text] = attempts.get(text, 0) + 1
        draw = random.Random(f"{text}#{attempt}").random()
        if (text.startswith("Item 0 ") and attempt <= 6) or draw < 0.2:
            return rate_limited("0.01") if draw < 0.1 else server_error(500)
        return Turn(text=json.dumps({"explanation": "stated by the source", "correct": True}))

    return reply, attempts


def test_a_judge_at_a_model_failing_20_percent_of_calls_loses_no_sample(tmp_path, monkeypatch):
    from ragassay.components import ComponentContext
    from ragassay.models import MetricResult, RAGOutput, Sample
    from ragassay.plugin_manager import get_plugin_host

    from servers.openai_chat import OpenAIChatServer

    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-faults")
    reply, attempts = _faulty_fact_checker()
    with OpenAIChatServer(default=reply) as server:
        generator = {  # no max_retries: the default deadline bounds the retries; small backoffs keep it quick
            "name": "openai",
            "options": {"model": "gpt-4o", "base_url": server.url + "/v1", "backoff_s": 0.01, "max_backoff_s": 0.05},
        }
        context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "c")
        metric = context.build("metric", {"name": "citation_groundedness", "options": {"generator": generator}})

        async def score_all():
            outputs = [
                (
                    Sample(question_id=f"q{i}", question=f"What about item {i}?"),
                    RAGOutput(
                        answer=f"Item {i} was made in {1900 + i} [1].", contexts=[f"Item {i} dates from {1900 + i}."]
                    ),
                )
                for i in range(N_ANSWERS)
            ]
            return await asyncio.gather(*(metric.ascore(sample, output) for sample, output in outputs))

        results = asyncio.run(score_all())
    lost = [r for r in results if not isinstance(r, MetricResult)]
    assert not lost, lost[:3]
    assert [r.value for r in results] == [1.0] * N_ANSWERS
    assert attempts["Item 0 was made in 1900"] == 7  # six faults in a row, then the answer
    assert server.calls > N_ANSWERS + 6  # faults happened and were retried
