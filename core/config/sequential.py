"""``[evaluation] sequential`` (and ``ragassay run --sequential``): how a sequential run stops.

Only the options live here (light: the config imports them); the procedure is
:mod:`ragassay.analysis.sequential` and :mod:`ragassay.analysis.sequential_replay`, its wiring into a run
:mod:`ragassay.engine.sequential.plan` (docs/statistics.md, Stopping early).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SequentialSettings(BaseModel):
    """How a sequential run stops: family-wise ``alpha``, the ``batch`` of samples judged between two checks,
    the batches run ahead of the check (``lookahead``), the most samples a comparison may take
    (``max_samples``; None: all) and an optional non-inferiority ``margin`` (a share of each metric's range)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    alpha: float = Field(
        0.05,
        gt=0,
        lt=1,
        description="Family-wise error rate of the decisions: each of the m comparisons of the decision family "
        "gets an anytime-valid confidence sequence at alpha / m (Bonferroni).",
    )
    batch: int = Field(
        50,
        ge=1,
        description="Samples processed between two checks: every comparison is tested after each complete batch "
        "(only there, so the stopping points do not depend on concurrency).",
    )
    lookahead: int = Field(
        1,
        ge=0,
        le=8,
        description="Batches processed ahead of the check: with 1, batch k + 1 runs while the check after batch "
        "k waits for batch k's slowest unit, so the run never stalls at a check; a system settled after batch k "
        "is then processed on exactly k + lookahead batches (0: k batches, the fewest calls, a stall at each check).",
    )
    max_samples: int | None = Field(
        None,
        ge=1,
        description="The most samples any comparison may take; one still open there is 'not settled' "
        "(default: every sample of the dataset).",
    )
    margin: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="Non-inferiority margin as a share of each metric's declared range (0.02: 2 points of a 0-1 "
        "metric): a comparison whose interval lies above -margin settles as 'non-inferior' (default: none).",
    )
