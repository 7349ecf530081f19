"""The budget ledger: an attempt starts only if its worst case fits (calls, tokens, usd, seconds), the first
refusal stops the session, and ``run --budget`` text is parsed strictly."""

from __future__ import annotations

import pytest

from ragassay.errors import ConfigError
from ragassay.llm.budget import OUTPUT_RESERVE, Budget, BudgetExhausted, BudgetLedger, prompt_tokens
from ragassay.llm.types import LLMRequest
from ragassay.models import TokenUsage


def request(text: str = "x" * 400, max_tokens: int | None = 100) -> LLMRequest:
    return LLMRequest(messages=[{"role": "user", "content": text}], params={"max_tokens": max_tokens})


def test_prompt_tokens_are_characters_over_four_rounded_up():
    assert prompt_tokens(request("x" * 401)) == 101


def test_calls_cap_counts_in_flight_attempts_and_the_first_refusal_stops_everything():
    ledger = BudgetLedger(Budget(calls=2))
    first = ledger.reserve(request(), "openai/gpt-4o-mini")
    ledger.reserve(request(), "openai/gpt-4o-mini")  # in flight: counted
    with pytest.raises(BudgetExhausted, match="2 calls are used up"):
        ledger.reserve(request(), "openai/gpt-4o-mini")
    ledger.settle(first, TokenUsage(input_tokens=90, output_tokens=10))
    with pytest.raises(BudgetExhausted):  # a slot came free, but the session is stopped
        ledger.reserve(request(), "openai/gpt-4o-mini")
    assert ledger.spent()["calls"] == 1 and ledger.spent()["tokens"] == 100


def test_tokens_reserve_prompt_plus_max_tokens_or_the_default_reserve():
    ledger = BudgetLedger(Budget(tokens=200 + OUTPUT_RESERVE))
    ticket = ledger.reserve(request(max_tokens=None), "local/m")  # 100 prompt + OUTPUT_RESERVE
    ledger.settle(ticket, TokenUsage(input_tokens=100, output_tokens=3))
    ledger.reserve(request(max_tokens=100), "local/m")  # 103 spent + 200 worst case fits
    with pytest.raises(BudgetExhausted, match="tokens"):
        ledger.reserve(request(max_tokens=OUTPUT_RESERVE), "local/m")


def test_usd_uses_the_price_table_and_refuses_an_unpriced_model():
    ledger = BudgetLedger(Budget(usd=0.001))
    ticket = ledger.reserve(request(max_tokens=100), "openai/gpt-4o-mini")  # 100 x 0.15 + 100 x 0.6 per 1e6
    assert ticket.usd == pytest.approx((100 * 0.15 + 100 * 0.60) / 1e6)
    with pytest.raises(BudgetExhausted, match="no price"):
        BudgetLedger(Budget(usd=1)).reserve(request(), "openai/my-own-model")


def test_seconds_stop_new_calls_after_the_deadline():
    now = [0.0]
    ledger = BudgetLedger(Budget(seconds=10), clock=lambda: now[0])
    ledger.reserve(request(), "local/m")
    now[0] = 10.0
    with pytest.raises(BudgetExhausted, match="10 s have passed"):
        ledger.reserve(request(), "local/m")


def test_parse_budget_text():
    assert Budget.parse("calls=100, usd=5").model_dump() == {"usd": 5.0, "calls": 100, "tokens": None, "seconds": None}
    assert Budget.parse("tokens=2e6").tokens == 2_000_000
    for bad in ("", "calls", "call=3", "calls=0", "usd=x", "calls=1.5"):
        with pytest.raises(ConfigError, match="--budget"):
            Budget.parse(bad)
