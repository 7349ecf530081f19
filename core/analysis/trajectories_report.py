"""Everything the trajectories section shows of a run, computed once (:func:`trajectory_report`): steps, the cost of
the hops and the extra cost over a single-shot system (:mod:`.trajectories`), and where trajectories fail by
blamed step and by hop (:mod:`.trajectories_failures`).

:func:`may_have_trajectories` says from a run read without payloads whether it is worth reading them: a run
with multi-hop samples (``Sample.hops``), expected tool calls, or a trajectory metric. The section is shown only
when, read with payloads, some output carries a trajectory.
"""

from __future__ import annotations

import dataclasses

from .conversations_answerability import metric_columns
from .trajectories import (
    DEFAULT_RESAMPLES,
    ExtraCost,
    HopCost,
    StepCounts,
    extra_costs,
    hop_costs,
    single_shot_system,
    step_counts,
    trajectories_of,
)
from .trajectories_failures import BLAME_METRICS, HOP_METRICS, BlameSummary, HopSummary, blame_summaries, hop_summaries

#: The metrics of trajectories (docs/metrics.md): a run that scored one of them has trajectories to show.
TRAJECTORY_METRICS = (
    *HOP_METRICS,
    *BLAME_METRICS,
    "tool_correctness",
    "argument_correctness",
    "trajectory_match",
    "step_efficiency",
    "token_efficiency",
    "loop_free",
    "trajectory_goal",
)


@dataclasses.dataclass(frozen=True)
class TrajectoryReport:
    """A run's trajectories: how many outputs carry one, and per system the steps, costs, extra cost over the
    single-shot system (None: there is none), blame and hop summaries."""

    run_id: str
    trajectories: int
    steps: list[StepCounts]
    costs: list[HopCost]
    single_shot: str | None
    extra: list[ExtraCost]
    blames: list[BlameSummary]
    hops: list[HopSummary]
    seed: int
    n_resamples: int


def may_have_trajectories(run) -> bool:
    """Whether ``run`` (read without payloads) has multi-hop samples, expected tool calls or a trajectory metric."""
    if any(metric_columns(run, name) for name in TRAJECTORY_METRICS):
        return True
    return any(sample.hops or sample.expected_tool_calls for sample in run.samples)


def trajectory_report(
    run, trajectories: dict | None = None, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> TrajectoryReport | None:
    """The :class:`TrajectoryReport` of ``run`` (read with payloads, or given its ``trajectories`` from
    :func:`ragassay.analysis.trajectories.trajectories_of`); None when no output carries a trajectory."""
    trajectories = trajectories_of(run) if trajectories is None else trajectories
    if not trajectories:
        return None
    settings = {"n_resamples": n_resamples, "seed": seed}
    single = single_shot_system(run, trajectories)
    return TrajectoryReport(
        run.id,
        len(trajectories),
        step_counts(run, trajectories, **settings),
        hop_costs(run, trajectories, **settings),
        single,
        extra_costs(run, trajectories, single, **settings),
        blame_summaries(run, **settings),
        hop_summaries(run, **settings),
        seed,
        n_resamples,
    )
