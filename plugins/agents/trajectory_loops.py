"""``loop_free``: 1 when the trajectory repeats no action beyond a limit, else 0, with the repeated steps named.

The actions of a trajectory are its ``tool_call`` steps (signature: the tool name and its arguments as canonical
JSON) and its ``retrieval`` steps (signature: the query, lower-cased, blanks collapsed), in order; model calls and
the answer are not actions (their text differs from call to call even in a loop). A loop is a block of 1 to
``max_cycle`` actions (a cycle of period p, not itself a repetition of a shorter block) that occurs more than
``limit`` times in a row: with the default limit 2, ``A A`` (one retry) is no loop, ``A A A`` and ``A B A B A B``
are. The scan goes left to right and reports each loop once (the shortest period first), then continues after it.

Source: DeepEval's StepEfficiencyMetric and MLflow's ToolCallEfficiency name "unnecessary loops" and "tool calls
with the same or similar arguments" as failures, judged by an LLM; this is a deterministic detector of the exact
repeats (same tool, same arguments, or same query), ragassay's definition.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, MetricResult, RAGOutput, Sample, Step, Unscored

from .trajectory_calls import needs_trajectory


class LoopOptions(BaseModel):
    """Options of ``loop_free``."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(
        2, ge=1, description="Most times one action, or one cycle of actions, may occur in a row (more is a loop)."
    )
    max_cycle: int = Field(3, ge=1, le=20, description="Longest cycle (in actions) looked for.")


#: the canonical JSON of a call's arguments: json.dumps(arguments, sort_keys=True, default=str, ensure_ascii=False)
_ARGUMENTS_JSON = json.JSONEncoder(sort_keys=True, default=str, ensure_ascii=False)


def signature(step: Step) -> str:
    """What makes two actions the same: ``tool <name> <arguments JSON>`` or ``retrieval <normalised query>``."""
    if step.kind == "tool_call":
        arguments = _ARGUMENTS_JSON.encode(step.arguments or {})
        return f"tool {step.name} {arguments}"
    return "retrieval " + " ".join((step.query or "").lower().split())


def actions(trajectory: Sequence[Step]) -> list[tuple[int, Step]]:
    """(index in the trajectory, step) of every tool call and retrieval, in order."""
    return [(i, s) for i, s in enumerate(trajectory) if s.kind in ("tool_call", "retrieval")]


def _repeats(signs: Sequence[str], start: int, period: int) -> int:
    """How many times ``signs[start:start+period]`` occurs in a row from ``start``."""
    block, count = signs[start : start + period], 0
    while signs[start + count * period : start + (count + 1) * period] == block:
        count += 1
    return count


def _primitive(block: Sequence[str]) -> bool:
    """Whether ``block`` is not a repetition of a shorter block."""
    n = len(block)
    return all(n % p or list(block[:p]) * (n // p) != list(block) for p in range(1, n))


def find_loops(signs: Sequence[str], limit: int, max_cycle: int) -> list[tuple[int, int, int]]:
    """(start, period, repeats) of every loop in ``signs`` (module docstring)."""
    loops, start = [], 0
    while start < len(signs):
        for period in range(1, max_cycle + 1):
            if start + period * (limit + 1) > len(signs) or signs[start] != signs[start + period]:
                continue  # fewer than limit + 1 repeats fit, or the block does not repeat once: no loop here
            if not _primitive(signs[start : start + period]):
                continue
            count = _repeats(signs, start, period)
            if count > limit:
                loops.append((start, period, count))
                start += period * count
                break
        else:
            start += 1
    return loops


class LoopFree(Metric):
    """1 when no action (the same tool with the same arguments, or the same retrieval query) or cycle of actions
    repeats more than ``limit`` times in a row, else 0 (module docstring).

    Formula: 1 - [some block of 1..max_cycle actions occurs more than limit times consecutively]. Details:
    ``loops`` = [{"period", "repeats", "actions": the repeated block's signatures, "steps": ids of every step in
    the loop, "step_indices"}], ``actions`` (how many were scanned), ``limit``. Source: ragassay's definition of
    the loops DeepEval's StepEfficiencyMetric and MLflow's ToolCallEfficiency look for with a judge.
    """

    name = "loop_free"
    requires = frozenset({"trajectory"})
    direction = "higher"
    value_range = (0.0, 1.0)
    uses_answer = False
    Options = LoopOptions
    formula = "1 unless a tool call (name + arguments), a query, or a cycle of them repeats > limit times in a row"
    source = "ragassay; the loops DeepEval StepEfficiencyMetric and MLflow ToolCallEfficiency judge"

    def score(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if (missing := needs_trajectory(output)) is not None:
            return missing
        acted = actions(output.trajectory)
        signs = [signature(step) for _, step in acted]
        rows: list[dict[str, Any]] = []
        for start, period, count in find_loops(signs, self.options.limit, self.options.max_cycle):
            span = acted[start : start + period * count]
            rows.append(
                {
                    "period": period,
                    "repeats": count,
                    "actions": signs[start : start + period],
                    "steps": [step.id for _, step in span],
                    "step_indices": [index for index, _ in span],
                }
            )
        details = {"loops": rows, "actions": len(acted), "limit": self.options.limit}
        return MetricResult(value=0.0 if rows else 1.0, details=details)
