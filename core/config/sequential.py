"""``[evaluation] sequential`` (and ``ragassay run --sequential``): how a sequential run stops.

The options live here (light: the config imports them), with the words for how a run stopped
(:func:`decision_counts`, :func:`stopped_detail`: the store, the read model and the commands say it alike); the
procedure is :mod:`ragassay.analysis.sequential` and :mod:`ragassay.analysis.sequential_replay`, its wiring into
a run :mod:`ragassay.engine.sequential.plan` (docs/statistics.md, Stopping early).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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


LABELLED_NOT_LIVE = (
    "labelled and sequential cannot go together in a run: a sequential run stops on the judge's scores while it "
    "runs, before anyone has labelled its outputs. Run without sequential, label the outputs, then decide "
    "anytime-valid on the labels with ragassay compare RUN --labelled METRIC=RUBRIC --sequential (a confidence "
    "sequence valid at every sample count; docs/statistics.md, Checking while you label)"
)
SETTLED_DECISIONS = ("better", "worse", "non-inferior")  # a comparison that settled (docs/statistics.md, the rules)
NOT_SETTLED, OPEN = "not settled", "open"  # reached the maximum sample count first; still open (an unfinished run)


def decision_counts(comparisons: Sequence[Mapping[str, Any]]) -> str:
    """The stored comparisons of a sequential run (``spec["sequential"]["comparisons"]``) counted in words:
    ``3 of 10 comparisons settled, 7 not settled at the maximum (100 samples)``; a comparison that reached the
    maximum sample count is never called settled."""
    from ..text import counted

    settled = sum(1 for c in comparisons if c.get("decision") in SETTLED_DECISIONS)
    parts = [f"{settled} of {counted(len(comparisons), 'comparison')} settled"]
    at_maximum = [int(c.get("settled_at") or 0) for c in comparisons if c.get("decision") == NOT_SETTLED]
    if at_maximum:
        parts.append(f"{len(at_maximum)} not settled at the maximum ({counted(max(at_maximum), 'sample')})")
    still_open = sum(1 for c in comparisons if c.get("decision") == OPEN)
    if still_open:
        parts.append(f"{still_open} still open")
    return ", ".join(parts)


STOPPED_EARLY = "stopped early"  # the state of a run stored with status "settled" (ragassay runs)


def stopped_detail(spec: Mapping[str, Any] | None) -> str:
    """The state detail of a sequential run that stopped early (status ``settled``), from its stored spec:
    ``sequential: 0 of 10 comparisons settled, 10 not settled at the maximum (30 samples)`` (running it again
    without ``--sequential`` completes it)."""
    record = (spec or {}).get("sequential") or {}
    return f"sequential: {decision_counts(record.get('comparisons') or [])}"
