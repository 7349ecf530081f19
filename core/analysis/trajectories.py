"""Agents' trajectories in a stored run: how many steps of each kind a trajectory takes, and what the extra hops
cost in tokens and latency, per system and against a single-shot system of the run.

A trajectory is :attr:`ragassay.models.RAGOutput.trajectory` (ordered :class:`ragassay.models.Step` objects,
nested agents' steps included); :func:`trajectories_of` reads them from a run read with payloads. Per system:

- **steps per trajectory**, by kind (model_call, retrieval, tool_call, answer, agent) and in all, over the ok
  outputs that carry a trajectory (:func:`step_counts`);
- **the cost of the hops** (:func:`hop_costs`): per ok output, its tokens (input + output of the stored output's
  usage; the sum of its model-call steps' usage when the output reports none) and its latency (the runner's wall
  time), their means, and per retrieval step the ratio of sums (all tokens / all retrieval steps; an output
  without a trajectory counts one retrieval step when it returned a non-empty context, the rule of
  docs/agents.md), so more hops show as more tokens per answer, not per step;
- **the extra cost against a single-shot system** (:func:`extra_costs`): the mean per-sample difference, system
  minus single shot, of tokens and of latency over the samples both answered (paired). The single-shot system is
  the first of the run with no trajectory on any output, else the first whose trajectories never retrieve more
  than once (:func:`single_shot_system`); none, no extra cost.

Every mean comes with a 95% interval that resamples clusters (:func:`ragassay.analysis.clustered.cluster_mean_ci`:
a conversation's turns together, independent samples as the plain bootstrap), ``n_resamples`` resamples drawn with
``seed``: the same run and seed give the same numbers in every process.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from ..models import Step
from .clustered import cluster_mean_ci, clusters_of

KINDS = ("model_call", "retrieval", "tool_call", "answer", "agent")  # the step kinds, in the order shown
DEFAULT_RESAMPLES = 1000


@dataclasses.dataclass(frozen=True)
class Estimate:
    """A mean over samples with its cluster-bootstrap interval: n values, the clusters they fall in; ``ci_low`` and
    ``ci_high`` are None exactly when ``reason`` says why (``value`` None: no value at all)."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    clusters: int
    reason: str | None = None


@dataclasses.dataclass(frozen=True)
class StepCounts:
    """One system's trajectories: how many, the mean steps of each kind per trajectory and in all, and how many
    held a nested agent."""

    system: str
    trajectories: int
    per_kind: dict[str, Estimate]  # kind -> mean steps of that kind per trajectory (kinds in KINDS order)
    total: Estimate
    nested: int  # trajectories with a nested agent's steps


@dataclasses.dataclass(frozen=True)
class HopCost:
    """One system's spending per answer and per retrieval step, over its ok outputs."""

    system: str
    outputs: int  # ok outputs
    trajectories: int  # of them, with a trajectory
    retrieval_steps: Estimate  # mean retrieval steps per output
    tokens: Estimate  # mean tokens per output
    latency_s: Estimate  # mean latency per output (outputs that report one)
    tokens_per_retrieval: float | None  # all tokens / all retrieval steps (None: no retrieval step)
    latency_per_retrieval: float | None  # all latency / all retrieval steps of the outputs that report one


@dataclasses.dataclass(frozen=True)
class ExtraCost:
    """What ``system`` spends beyond the single-shot ``baseline`` per sample both answered (paired means)."""

    system: str
    baseline: str
    tokens: Estimate
    latency_s: Estimate


def trajectories_of(run) -> dict[tuple[str, str], list[Step]]:
    """(system, question_id) -> the trajectory of every ok output of ``run`` that carries one (non-empty), read
    from the stored outputs' JSON (``run`` read with payloads: :func:`ragassay.results.read_run`)."""
    if not run.has_payloads:
        raise ValueError("trajectories need the outputs' JSON: read the run with payloads=True")
    found = {}
    for key, record in run.outputs.items():
        raw = record.payload
        if not record.ok or not raw or _empty_trajectory(raw):
            continue
        steps = json.loads(raw).get("trajectory") or []
        if steps:
            found[key] = [Step.model_validate(step) for step in steps]
    return found


def _empty_trajectory(raw: str) -> bool:
    """Whether a stored output's JSON surely has no steps, without parsing it: the JSON is compact (pydantic's),
    so a trajectory with steps shows as ``"trajectory":[{``; where that text is found (perhaps inside ``trace``)
    the JSON is parsed."""
    return '"trajectory":[{' not in raw


def estimate(values, labels, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> Estimate:
    """The mean of ``values`` (NaN: no value) with its cluster-bootstrap interval; ``labels`` are the values'
    clusters (:attr:`ragassay.results.RunData.clusters` of their samples)."""
    values = np.asarray(values, dtype=float)
    kept = ~np.isnan(values)
    labels = [str(label) for label, keep in zip(labels, kept) if keep]
    if not labels:
        return Estimate(None, None, None, 0, 0, "no value")
    grouping = clusters_of(labels)
    (mean,) = cluster_mean_ci(values[kept], grouping, n_resamples=n_resamples, seed=seed)
    return Estimate(mean.mean, mean.ci_low, mean.ci_high, int(kept.sum()), grouping.count, mean.reason)


def retrieval_steps(steps: list[Step]) -> int:
    """How many retrieval steps a trajectory took (nested agents' included)."""
    return sum(1 for step in steps if step.kind == "retrieval")


def step_counts(run, trajectories: dict, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> list[StepCounts]:
    """Per system of ``run`` with a trajectory (run order), the :class:`StepCounts` of its ``trajectories``
    (:func:`trajectories_of`)."""
    found = []
    for system in run.systems:
        keys = [q for q in run.question_ids if (system, q) in trajectories]
        if not keys:
            continue
        labels = [run.clusters[run.position[q]] for q in keys]
        counts = {kind: [] for kind in KINDS}
        for q in keys:
            kinds = [step.kind for step in trajectories[(system, q)]]
            for kind in KINDS:
                counts[kind].append(kinds.count(kind))
        per_kind = {k: estimate(v, labels, n_resamples=n_resamples, seed=seed) for k, v in counts.items() if any(v)}
        totals = [len(trajectories[(system, q)]) for q in keys]
        nested = sum(1 for q in keys if any(s.parent_id for s in trajectories[(system, q)]))
        total = estimate(totals, labels, n_resamples=n_resamples, seed=seed)
        found.append(StepCounts(system, len(keys), per_kind, total, nested))
    return found


def output_tokens(record, steps: list[Step] | None) -> int:
    """An output's tokens: input + output of its stored usage; the sum over its steps' usage when it has none."""
    stored = record.usage.input_tokens + record.usage.output_tokens
    if stored or not steps:
        return stored
    return sum(s.usage.input_tokens + s.usage.output_tokens for s in steps if s.usage is not None)


def output_retrievals(record, steps: list[Step] | None) -> int:
    """An output's retrieval steps: those of its trajectory; without one, 1 when it returned a non-empty context."""
    if steps:
        return retrieval_steps(steps)
    return 1 if record.retrieved_count else 0


def per_output(run, system: str, trajectories: dict) -> dict[str, np.ndarray]:
    """Per sample of ``run`` (its order) for ``system``: ``tokens``, ``latency``, ``retrievals`` (NaN where the
    output is not ok, or reports no latency) and ``trajectory`` (1 with a trajectory, else 0)."""
    n = len(run.question_ids)
    columns = {name: np.full(n, np.nan) for name in ("tokens", "latency", "retrievals")}
    columns["trajectory"] = np.zeros(n)
    for i, q in enumerate(run.question_ids):
        record = run.output(system, q)
        if record is None or not record.ok:
            continue
        steps = trajectories.get((system, q))
        columns["tokens"][i] = output_tokens(record, steps)
        columns["retrievals"][i] = output_retrievals(record, steps)
        if record.latency_s is not None:
            columns["latency"][i] = record.latency_s
        columns["trajectory"][i] = 1.0 if steps else 0.0
    return columns


def hop_costs(run, trajectories: dict, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> list[HopCost]:
    """Per system of ``run`` (run order), its :class:`HopCost`."""
    found = []
    labels = run.clusters
    for system in run.systems:
        columns = per_output(run, system, trajectories)
        ok = ~np.isnan(columns["tokens"])
        steps, tokens, latency = columns["retrievals"], columns["tokens"], columns["latency"]
        timed = ok & ~np.isnan(latency)

        def each(values):
            return estimate(values, labels, n_resamples=n_resamples, seed=seed)

        found.append(
            HopCost(
                system,
                int(ok.sum()),
                int(columns["trajectory"].sum()),
                each(steps),
                each(tokens),
                each(latency),
                _ratio(tokens[ok].sum(), steps[ok].sum()),
                _ratio(latency[timed].sum(), steps[timed].sum()),
            )
        )
    return found


def _ratio(top: float, bottom: float) -> float | None:
    return float(top / bottom) if bottom > 0 else None


def single_shot_system(run, trajectories: dict) -> str | None:
    """The run's single-shot system: the first with ok outputs and no trajectory on any of them, else the first
    whose trajectories never take more than one retrieval step; None when every system hops."""
    answered = {s: [q for q in run.question_ids if (o := run.output(s, q)) is not None and o.ok] for s in run.systems}
    for system in run.systems:
        if answered[system] and not any((system, q) in trajectories for q in answered[system]):
            return system
    for system in run.systems:
        mine = [trajectories[(system, q)] for q in answered[system] if (system, q) in trajectories]
        if mine and all(retrieval_steps(steps) <= 1 for steps in mine):
            return system
    return None


def extra_costs(
    run, trajectories: dict, baseline: str | None = None, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> list[ExtraCost]:
    """Per other system with a trajectory (run order), its :class:`ExtraCost` over ``baseline`` (default:
    :func:`single_shot_system`); empty without a single-shot system."""
    baseline = baseline or single_shot_system(run, trajectories)
    if baseline is None:
        return []
    base = per_output(run, baseline, trajectories)
    found = []
    for system in run.systems:
        if system == baseline or not any(s == system for s, _ in trajectories):
            continue
        mine = per_output(run, system, trajectories)
        tokens = mine["tokens"] - base["tokens"]  # NaN unless both answered
        latency = mine["latency"] - base["latency"]
        found.append(
            ExtraCost(
                system,
                baseline,
                estimate(tokens, run.clusters, n_resamples=n_resamples, seed=seed),
                estimate(latency, run.clusters, n_resamples=n_resamples, seed=seed),
            )
        )
    return found
