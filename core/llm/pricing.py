"""Cost from token counts and a price table.

The built-in table holds the public list prices (USD per million tokens) of a few common models **as of
PRICES_AS_OF**, taken from the providers' pricing pages (openai.com/api/pricing, anthropic.com/pricing).
Prices change: check them before trusting a cost figure, and extend or override the table in the config::

    [llm.prices."gpt-4o-mini"]
    input_per_million = 0.15
    output_per_million = 0.60
    cached_input_per_million = 0.075

cost = (input - cached) x input price + cached x cached-input price + (output - reasoning) x output price
+ reasoning x reasoning price. The reasoning price (``reasoning_per_million``) defaults to the output price, as
OpenAI and Anthropic bill thinking tokens as output; set it where a provider prices them apart.
Anthropic's cache *writes* (billed 1.25x) are counted as ordinary input. Models of the ``local`` backend
cost nothing. A model name matches a table key exactly, or a key followed by a date or ``-latest``
(``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``, ``claude-3-5-haiku-20241022`` -> ``claude-3-5-haiku``);
any other model has no cost (None), never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..models import TokenUsage
from .settings import ModelPrice

PRICES_AS_OF = "2025-11-30"

_P = ModelPrice
BUILTIN_PRICES: dict[str, ModelPrice] = {
    # OpenAI (input, output, cached input)
    "gpt-5": _P(input_per_million=1.25, output_per_million=10.0, cached_input_per_million=0.125),
    "gpt-5-mini": _P(input_per_million=0.25, output_per_million=2.0, cached_input_per_million=0.025),
    "gpt-5-nano": _P(input_per_million=0.05, output_per_million=0.40, cached_input_per_million=0.005),
    "gpt-4.1": _P(input_per_million=2.0, output_per_million=8.0, cached_input_per_million=0.50),
    "gpt-4.1-mini": _P(input_per_million=0.40, output_per_million=1.60, cached_input_per_million=0.10),
    "gpt-4.1-nano": _P(input_per_million=0.10, output_per_million=0.40, cached_input_per_million=0.025),
    "gpt-4o": _P(input_per_million=2.50, output_per_million=10.0, cached_input_per_million=1.25),
    "gpt-4o-mini": _P(input_per_million=0.15, output_per_million=0.60, cached_input_per_million=0.075),
    "gpt-3.5-turbo": _P(input_per_million=0.50, output_per_million=1.50),
    "o3-mini": _P(input_per_million=1.10, output_per_million=4.40, cached_input_per_million=0.55),
    # Anthropic (input, output, cache read)
    "claude-opus-4-5": _P(input_per_million=5.0, output_per_million=25.0, cached_input_per_million=0.50),
    "claude-opus-4-1": _P(input_per_million=15.0, output_per_million=75.0, cached_input_per_million=1.50),
    "claude-opus-4": _P(input_per_million=15.0, output_per_million=75.0, cached_input_per_million=1.50),
    "claude-sonnet-4-5": _P(input_per_million=3.0, output_per_million=15.0, cached_input_per_million=0.30),
    "claude-sonnet-4": _P(input_per_million=3.0, output_per_million=15.0, cached_input_per_million=0.30),
    "claude-haiku-4-5": _P(input_per_million=1.0, output_per_million=5.0, cached_input_per_million=0.10),
    "claude-3-7-sonnet": _P(input_per_million=3.0, output_per_million=15.0, cached_input_per_million=0.30),
    "claude-3-5-sonnet": _P(input_per_million=3.0, output_per_million=15.0, cached_input_per_million=0.30),
    "claude-3-5-haiku": _P(input_per_million=0.80, output_per_million=4.0, cached_input_per_million=0.08),
    "claude-3-haiku": _P(input_per_million=0.25, output_per_million=1.25, cached_input_per_million=0.03),
}

FREE_BACKENDS = frozenset({"local"})
_VERSION_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


class PriceTable:
    """Built-in prices overridden and extended by ``[llm.prices]`` (keys: ``model`` or ``backend/model``)."""

    def __init__(self, extra: Mapping[str, ModelPrice | Mapping[str, Any]] | None = None):
        self.prices = dict(BUILTIN_PRICES)
        self._memo: dict[str, ModelPrice | None] = {}
        for name, price in (extra or {}).items():
            self.prices[name] = price if isinstance(price, ModelPrice) else ModelPrice.model_validate(price)

    def price(self, model_key: str) -> ModelPrice | None:
        """The price of ``backend/model`` (or a bare model name), None if unknown."""
        if model_key not in self._memo:
            self._memo[model_key] = self._lookup(model_key)
        return self._memo[model_key]

    def _lookup(self, model_key: str) -> ModelPrice | None:
        backend, _, model = model_key.rpartition("/") if "/" in model_key else ("", "", model_key)
        if backend in FREE_BACKENDS:
            return ModelPrice(input_per_million=0, output_per_million=0)
        for name in (model_key, model):
            if name in self.prices:
                return self.prices[name]
            undated = _VERSION_SUFFIX.sub("", name)
            if undated != name and undated in self.prices:
                return self.prices[undated]
        return None

    def cost(self, usage: TokenUsage, model_key: str | None = None) -> float | None:
        """USD for ``usage``: priced per ``by_model`` entry, or as one ``model_key``; None if any is unknown."""
        if model_key is None and usage.by_model:
            total = 0.0
            for key, part in usage.by_model.items():
                cost = self.cost(part, key)
                if cost is None:
                    return None
                total += cost
            return total
        price = self.price(model_key) if model_key else None
        if price is None:
            return None if (usage.input_tokens or usage.output_tokens) else 0.0
        cached_price = price.cached_input_per_million
        cached_price = price.input_per_million if cached_price is None else cached_price
        reasoning_price = price.reasoning_per_million
        reasoning_price = price.output_per_million if reasoning_price is None else reasoning_price
        fresh = max(0, usage.input_tokens - usage.cached_tokens)
        reasoning = min(usage.reasoning_tokens, usage.output_tokens)
        return (
            fresh * price.input_per_million
            + usage.cached_tokens * cached_price
            + (usage.output_tokens - reasoning) * price.output_per_million
            + reasoning * reasoning_price
        ) / 1e6

    def unpriced(self, usage: TokenUsage) -> list[str]:
        """The ``backend/model`` keys of ``usage`` that have no price."""
        return sorted(key for key in usage.by_model if self.price(key) is None)
