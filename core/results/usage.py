"""What an answer, a metric value or a judgement spent: tokens, model calls, cost (:class:`Usage`)."""

from __future__ import annotations

import dataclasses
import functools


@dataclasses.dataclass(frozen=True, slots=True)
class Usage:
    """Tokens, model calls and cost of an answer or of a metric value's / judgement's own model calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float | None = 0.0  # None when a model used has no price
    unpriced: tuple[str, ...] = ()
    reasoning_tokens: int = 0  # of output_tokens: what a reasoning model spent thinking

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def of(values: tuple) -> Usage:
        """From the stored (input, output, cached tokens, calls, cache hits, cost, unpriced[, reasoning tokens])
        columns; the same columns give the same shared object, and most rows of a run spend nothing (:data:`ZERO`).
        Without the eighth column (an output's usage, a store of an older schema) reasoning tokens are 0."""
        tin, tout, cached, calls, hits, cost, unpriced, *rest = values
        reasoning = (rest[0] or 0) if rest else 0
        models = tuple(sorted({m.strip() for m in (unpriced or "").split(",") if m.strip()}))
        if not (tin or tout or cached or calls or hits or cost or models):
            return ZERO if cost is not None else NOTHING_UNPRICED
        return Usage(tin or 0, tout or 0, cached or 0, calls or 0, hits or 0, cost, models, reasoning)


#: Nothing spent.
ZERO = Usage()
#: Nothing spent, with no cost stored (NULL): what a metric without model calls or a failed output stores.
NOTHING_UNPRICED = Usage(cost_usd=None)
