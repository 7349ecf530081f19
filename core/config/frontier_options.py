"""``[evaluation] frontier``: which latency quantile and which cost the quality-cost-latency frontier compares.

The options live here (light: the config imports them); the frontier itself is :mod:`ragassay.analysis.latency`
(docs/statistics.md, The frontier). ``compare``, ``cost``, ``run`` and the report read the setting stored with
the run (:func:`frontier_settings`), so a run is judged as it was configured.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError

#: The latency quantiles a frontier can compare, by their config names.
QUANTILES = {"p50": 0.5, "p95": 0.95, "p99": 0.99}
DOLLARS, TOKENS = "dollars", "tokens"


class FrontierSettings(BaseModel):
    """The frontier's latency quantile and cost dimension, e.g. ``{ latency = "p95", cost = "tokens" }``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    latency: Literal["p50", "p95", "p99"] = Field(
        "p50",
        description="The latency quantile compared (its 95% percentile-bootstrap interval): one system is faster "
        "than another only when its interval lies wholly below the other's. p95 or p99 judge the slow tail.",
    )
    cost: Literal["dollars", "tokens"] = Field(
        "dollars",
        description="The cost compared: dollars, the cost at list price per answered sample (left out when a "
        "system used an unpriced model); tokens, the mean tokens (input + output) per answered sample.",
    )

    @property
    def quantile(self) -> float:
        """The latency quantile as a probability (0.5, 0.95 or 0.99)."""
        return QUANTILES[self.latency]


def frontier_settings(config: Mapping[str, Any] | None) -> FrontierSettings:
    """``[evaluation] frontier`` of a stored config (the defaults when it has none: a run made before the option).

    :raises ConfigError: the stored value is not a valid setting (the key, the value and what is allowed).
    """
    raw = ((config or {}).get("evaluation") or {}).get("frontier")
    if raw is None:
        return FrontierSettings()
    try:
        return FrontierSettings.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigError(
            f"[evaluation] frontier of the stored config is not valid ({problems}). Allowed: latency = "
            f'"p50" | "p95" | "p99", cost = "dollars" | "tokens".'
        ) from None
