"""What a sequential run decided and what stopping early saved, from its stored record (``spec["sequential"]``,
written by :mod:`ragassay.engine.sequential.plan`) and its usage.

**Saved** is a projection: for each system, the per-sample mean of what its processed samples spent (its own
model calls, tokens and cost plus those of its metrics and judges) times the samples it was not processed on.
A system later completed (a full run resumed over the sequential one) saved nothing. A cost is unknown (None)
when a model used has no price, never 0.

A comparison the run stopped early is decided by its anytime-valid interval; a fixed-n interval computed on the
samples it happened to stop at is not valid (the stop depended on the data), so :attr:`SequentialOutcome.stopped`
tells the views to show the sequential decision in its place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from .usage import SystemUsage


@dataclasses.dataclass(frozen=True)
class SequentialRow:
    """One comparison of the family: its decision ("better", "worse", "non-inferior", "not settled", or "open"
    in an unfinished run), the sample count at which it settled, and its anytime-valid interval of the mean
    gain (candidate - baseline, sign-flipped for a lower-is-better metric) at ``level``."""

    system: str
    baseline: str
    metric: str
    decision: str
    settled_at: int
    n: int
    mean_gain: float | None
    ci_low: float
    ci_high: float
    level: float
    unit: str = "sample"  # what n counts: "sample", or "conversation" (turns of conversations; the mean is then
    # the conversation-weighted mean gain: ragassay.analysis.sequential_replay)


@dataclasses.dataclass(frozen=True)
class Saving:
    """One system: samples processed of the run's samples, and the projected calls, tokens and cost saved."""

    system: str
    processed: int
    samples: int
    calls: float
    tokens: float
    usd: float | None  # None: a model without a price


@dataclasses.dataclass(frozen=True)
class SequentialOutcome:
    """A sequential run's decisions and savings (module docstring)."""

    run_id: str
    settings: dict[str, Any]
    seed: int
    baseline: str
    samples: int
    checked: int
    complete: bool  # every comparison settled (or reached the maximum)
    rows: list[SequentialRow]
    savings: list[Saving]

    @property
    def stopped(self) -> bool:
        """Whether some system was not processed on every sample (then fixed-n verdicts are not valid)."""
        return any(s.processed < s.samples for s in self.savings)

    @property
    def calls_saved(self) -> float:
        return sum(s.calls for s in self.savings)

    @property
    def tokens_saved(self) -> float:
        return sum(s.tokens for s in self.savings)

    @property
    def usd_saved(self) -> float | None:
        costs = [s.usd for s in self.savings]
        return None if None in costs else sum(costs)  # type: ignore[arg-type]

    def row(self, system: str, metric: str) -> SequentialRow | None:
        """The comparison of ``system`` on ``metric``, if it is in the family."""
        return next((r for r in self.rows if (r.system, r.metric) == (system, metric)), None)


def sequential_outcome(run: Any, usages: Sequence[SystemUsage]) -> SequentialOutcome | None:
    """The outcome of ``run`` (a :class:`ragassay.results.RunData`), or None when it was not run sequentially."""
    record = (run.info.spec or {}).get("sequential")
    if not record:
        return None
    rows = [
        SequentialRow(
            c["system"],
            c["baseline"],
            c["metric"],
            c["decision"],
            int(c["settled_at"]),
            int(c["n"]),
            c.get("mean_gain"),
            float(c["ci_low"]),
            float(c["ci_high"]),
            float(c["level"]),
            str(c.get("unit", "sample")),
        )
        for c in record.get("comparisons", [])
    ]
    return SequentialOutcome(
        run.id,
        dict(record.get("settings") or {}),
        int(record.get("seed", 0)),
        str(record.get("baseline", "")),
        int(record.get("samples", run.info.sample_count)),
        int(record.get("checked", 0)),
        bool(record.get("complete")),
        rows,
        [_saving(usage) for usage in usages],
    )


def _saving(usage: SystemUsage) -> Saving:
    """Projected savings of one system: per-sample mean of what its stored outputs spent x samples without one."""
    processed, missing = usage.outputs, max(usage.samples - usage.outputs, 0)
    evaluation = usage.evaluation
    calls = usage.calls + evaluation.calls
    tokens = usage.input_tokens + usage.output_tokens + evaluation.input_tokens + evaluation.output_tokens
    cost = None if usage.cost_usd is None or evaluation.cost_usd is None else usage.cost_usd + evaluation.cost_usd
    share = missing / processed if processed else 0.0
    return Saving(
        usage.system, processed, usage.samples, calls * share, tokens * share, None if cost is None else cost * share
    )
