"""``step_efficiency`` and ``token_efficiency``: how much of a trajectory's work was needed.

- ``step_efficiency`` = min(1, needed / taken): the steps a right trajectory needs over the steps this one took.
  ``steps = "tool_calls"``: needed = the sample's expected tool calls, taken = the trajectory's tool calls
  (with ``count_retrievals``, its retrievals too); ``steps = "retrievals"``: needed = the sample's hops (one
  retrieval per hop), taken = its retrieval steps. A deterministic counterpart of DeepEval's StepEfficiencyMetric
  (an LLM judge "rewarding fewer unnecessary steps and penalizing detours") and MLflow's ToolCallEfficiency
  (redundant tool calls), with the reference the sample gives.
- ``token_efficiency`` = min(1, budget / tokens): a token budget per sample (``budget``, required) over the tokens
  the trajectory's model calls used (input + output; ``count`` picks one side), falling back to the output's
  summed usage when no step records its tokens. ragassay's definition; cost reported beside quality as Kapoor et
  al. (2024, "AI Agents That Matter", arXiv:2407.01502, section 2) ask, normalised to [0, 1] by the budget the
  user sets.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, MetricResult, RAGOutput, Sample, ScoringUnit, Unscored

from .trajectory_calls import needs_expected, needs_trajectory, unit_calls


class StepEfficiencyOptions(BaseModel):
    """Options of ``step_efficiency``."""

    model_config = ConfigDict(extra="forbid")

    steps: Literal["tool_calls", "retrievals"] = Field(
        "tool_calls",
        description="tool_calls: expected tool calls over the tool calls made; retrievals: the sample's hops over "
        "the retrieval steps made.",
    )
    count_retrievals: bool = Field(
        False, description="steps = tool_calls: also count retrieval steps as tool calls (as tool_correctness)."
    )


class StepEfficiency(Metric):
    """Steps needed over steps taken, at most 1 (module docstring).

    Formula: min(1, needed / taken); unscored when the trajectory took no such step (no efficiency is defined;
    tool_correctness or hop coverage measure what is missing). Source: DeepEval StepEfficiencyMetric and MLflow
    ToolCallEfficiency, made deterministic against the sample's expected calls or hops.
    """

    name = "step_efficiency"
    requires = frozenset({"expected_tool_calls", "trajectory"})
    direction = "higher"
    value_range = (0.0, 1.0)
    uses_answer = False
    Options = StepEfficiencyOptions
    formula = "min(1, needed steps / steps taken)  (expected tool calls / calls, or hops / retrieval steps)"
    source = "DeepEval StepEfficiencyMetric; MLflow ToolCallEfficiency (deterministic, against expected calls or hops)"

    @classmethod
    def required(cls, options: BaseModel) -> frozenset[str]:
        if getattr(options, "steps", "tool_calls") == "retrievals":
            return frozenset({"hops", "trajectory"})
        return cls.requires

    def score(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        return self.score_unit(ScoringUnit(sample, output))

    def score_unit(self, unit: ScoringUnit) -> MetricResult | Unscored:
        """The value, counting the tool calls the unit's call metrics compare (:func:`.trajectory_calls.unit_calls`)."""
        sample, output = unit.sample, unit.output
        if (missing := needs_trajectory(output)) is not None:
            return missing
        if self.options.steps == "retrievals":
            if not sample.hops:
                return Unscored(reason="the sample has no hops: the retrievals needed are not known")
            needed = len(sample.hops)
            taken = [(i, s) for i, s in enumerate(output.trajectory) if s.kind == "retrieval"]
        else:
            if (missing := needs_expected(sample)) is not None:
                return missing
            needed = len(sample.expected_tool_calls)
            taken = [(c.index, c.step) for c in unit_calls(unit, self.options.count_retrievals).made]
        details = {
            "steps": self.options.steps,
            "needed": needed,
            "taken": len(taken),
            "counted": [{"step": s.id, "step_index": i, "kind": s.kind, "name": s.name} for i, s in taken],
        }
        if not taken:
            what = "retrieval" if self.options.steps == "retrievals" else "tool call"
            return Unscored(reason=f"the trajectory made no {what}: no efficiency is defined", details=details)
        return MetricResult(value=min(1.0, needed / len(taken)), details=details)


class TokenEfficiencyOptions(BaseModel):
    """Options of ``token_efficiency``."""

    model_config = ConfigDict(extra="forbid")

    budget: int = Field(
        ge=1, description="Tokens one sample should need (required): the value is min(1, budget / tokens used)."
    )
    count: Literal["total", "input", "output"] = Field(
        "total", description="Which tokens count: input + output (total), input only, or output only."
    )


def _tokens(usage: Any, count: str) -> int:
    if count == "input":
        return usage.input_tokens
    if count == "output":
        return usage.output_tokens
    return usage.input_tokens + usage.output_tokens


class TokenEfficiency(Metric):
    """A token budget over the tokens the trajectory used, at most 1 (module docstring).

    Formula: min(1, budget / T), T the tokens (``count``) summed over the trajectory's steps that record usage,
    else the output's usage; unscored when neither records any token. Source: ragassay's definition, after Kapoor
    et al. (2024), "AI Agents That Matter", arXiv:2407.01502, section 2 (cost beside accuracy).
    """

    name = "token_efficiency"
    requires = frozenset({"trajectory"})
    direction = "higher"
    value_range = (0.0, 1.0)
    uses_answer = False
    Options = TokenEfficiencyOptions
    formula = "min(1, budget / tokens used by the trajectory's model calls)"
    source = "ragassay; cost beside accuracy after Kapoor et al. 2024, AI Agents That Matter (arXiv:2407.01502), s. 2"

    def score(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if (missing := needs_trajectory(output)) is not None:
            return missing
        count = self.options.count
        per_step = [
            {"step": s.id, "step_index": i, "tokens": _tokens(s.usage, count)}
            for i, s in enumerate(output.trajectory)
            if s.usage is not None
        ]
        source, tokens = "steps", sum(row["tokens"] for row in per_step)
        if not per_step:
            source, tokens = "output.usage", _tokens(output.usage, count)
        details = {"tokens": tokens, "budget": self.options.budget, "count": count, "source": source}
        details["per_step"] = per_step
        if tokens <= 0:
            return Unscored(reason=f"no {count} token count recorded (steps nor output usage)", details=details)
        return MetricResult(value=min(1.0, self.options.budget / tokens), details=details)
