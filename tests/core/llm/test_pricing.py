"""Prices: exact and dated model names, config overrides, cached-input pricing, unknown models."""

from __future__ import annotations

import pytest

from ragassay.llm.pricing import BUILTIN_PRICES, PRICES_AS_OF, PriceTable
from ragassay.models import TokenUsage


def test_exact_and_dated_names_resolve():
    table = PriceTable()
    assert table.price("openai/gpt-4o-mini") is BUILTIN_PRICES["gpt-4o-mini"]
    assert table.price("openai/gpt-4o-mini-2024-07-18") is BUILTIN_PRICES["gpt-4o-mini"]
    assert table.price("gpt-4o-2024-08-06") is BUILTIN_PRICES["gpt-4o"]
    assert table.price("anthropic/claude-3-5-haiku-20241022") is BUILTIN_PRICES["claude-3-5-haiku"]
    assert table.price("anthropic/claude-3-5-haiku-latest") is BUILTIN_PRICES["claude-3-5-haiku"]
    assert table.price("anthropic/claude-sonnet-4-5-20250929") is BUILTIN_PRICES["claude-sonnet-4-5"]
    assert table.price("openai/gpt-4o-minimal") is None  # only a date or -latest may follow a known name
    assert table.price("openai/gpt-4o-audio-preview") is None
    assert table.price("openai/my-model") is None


def test_local_models_are_free():
    assert PriceTable().cost(TokenUsage(input_tokens=10**6, output_tokens=10**6), "local/SmolLM2") == 0.0


def test_cost_formula_with_cached_input():
    usage = TokenUsage(input_tokens=1_000_000, cached_tokens=400_000, output_tokens=100_000)
    # gpt-4o-mini: 0.15 / M input, 0.075 / M cached input, 0.60 / M output
    assert PriceTable().cost(usage, "openai/gpt-4o-mini") == pytest.approx(0.6 * 0.15 + 0.4 * 0.075 + 0.1 * 0.60)


def test_config_prices_extend_and_override():
    table = PriceTable(
        {
            "my-model": {"input_per_million": 1.0, "output_per_million": 2.0},
            "openai/gpt-4o-mini": {"input_per_million": 10.0, "output_per_million": 10.0},
        }
    )
    usage = TokenUsage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert table.cost(usage, "openai/my-model") == pytest.approx(3.0)
    assert table.cost(usage, "openai/gpt-4o-mini") == pytest.approx(20.0)
    assert table.cost(usage, "anthropic/gpt-4o-mini") == pytest.approx(0.75)  # the bare built-in


def test_cost_sums_per_model_and_is_unknown_if_any_model_is():
    known = TokenUsage(input_tokens=1_000_000)
    usage = TokenUsage(by_model={"openai/gpt-4o": known, "local/x": known})
    assert PriceTable().cost(usage) == pytest.approx(2.5)
    usage.by_model["openai/mystery"] = known
    assert PriceTable().cost(usage) is None and PriceTable().unpriced(usage) == ["openai/mystery"]
    assert PriceTable().cost(TokenUsage()) == 0.0


def test_prices_are_dated():
    assert PRICES_AS_OF[:4].isdigit()
