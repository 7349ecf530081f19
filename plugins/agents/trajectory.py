"""Trajectory metrics against expected tool calls: ``tool_correctness``, ``argument_correctness`` and
``trajectory_match`` (strict, unordered, subset, superset); this module also registers ``step_efficiency``,
``token_efficiency`` (:mod:`.trajectory_efficiency`) and ``loop_free`` (:mod:`.trajectory_loops`).

The calls compared are the trajectory's ``tool_call`` steps (and, with ``count_retrievals``, its retrievals), and
arguments match as agentevals' argument modes say (:mod:`.trajectory_calls`). A sample without
``expected_tool_calls`` or an output without a trajectory is unscored with the reason; a trajectory that makes no
call scores 0 where calls were expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from ragassay import Metric, MetricResult, RAGOutput, Sample, ScoringUnit, ToolCall, Unscored, hookimpl

from .trajectory_calls import (
    CallOptions,
    ComparedCalls,
    MadeCall,
    MatchMode,
    call_row,
    needs_expected,
    needs_trajectory,
    pairing,
    unit_calls,
)
from .trajectory_efficiency import StepEfficiency, TokenEfficiency
from .trajectory_loops import LoopFree

CALLS_REQUIRE = frozenset({"expected_tool_calls", "trajectory"})


def _inputs(unit: ScoringUnit, options: CallOptions) -> ComparedCalls | Unscored:
    missing = needs_expected(unit.sample) or needs_trajectory(unit.output)
    if missing is not None:
        return missing
    return unit_calls(unit, options.count_retrievals)


class _CallsMetric(Metric):
    """A metric that compares the made tool calls with the expected ones: ``score_unit`` shares the comparison
    (:func:`.trajectory_calls.unit_calls`) with the unit's other such metrics."""

    def score(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        return self.score_unit(ScoringUnit(sample, output))

    def score_unit(self, unit: ScoringUnit) -> MetricResult | Unscored:
        """The value from the unit's compared calls (unscored without expected calls or a trajectory)."""
        found = _inputs(unit, self.options)
        return found if isinstance(found, Unscored) else self.compare(found)

    def compare(self, found: ComparedCalls) -> MetricResult | Unscored:
        raise NotImplementedError


def _name_lcs(expected: Sequence[ToolCall], made: Sequence[MadeCall]) -> dict[int, int]:
    """A longest common subsequence of the two name sequences as {expected index: made index} (the earliest
    expected calls first on ties)."""
    n, m = len(expected), len(made)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            same = expected[i].name == made[j].name
            table[i][j] = table[i + 1][j + 1] + 1 if same else max(table[i + 1][j], table[i][j + 1])
    pairs, i, j = {}, 0, 0
    while i < n and j < m:
        if expected[i].name == made[j].name and table[i][j] == table[i + 1][j + 1] + 1:
            pairs[i], i, j = j, i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _expected_rows(found: ComparedCalls, pairs: dict[int, int]) -> list[dict]:
    """One row per expected call, with the made call paired with it (``pairs``), if any (:meth:`ComparedCalls.row`)."""
    row, get = found.row, pairs.get
    return [row(e, get(e)) for e in range(len(found.expected))]


def _extra(found: ComparedCalls, pairs: dict[int, int]) -> list[dict[str, Any]]:
    used = set(pairs.values())
    return [{**call_row(c), "arguments": found.made_json(m)} for m, c in enumerate(found.made) if m not in used]


class ToolCorrectnessOptions(CallOptions):
    """Options of ``tool_correctness``."""

    ordered: bool = Field(
        False,
        description="Count only expected calls matched in order: the longest common subsequence of the expected "
        "and made tool names (DeepEval's should_consider_ordering) instead of a one-to-one match by name.",
    )


class ToolCorrectness(_CallsMetric):
    """Share of the expected tool calls that the trajectory made, matched by tool name.

    Formula: |M| / |E|, E the expected calls, M a maximum one-to-one matching of expected to made calls with the
    same name (``ordered``: the longest common subsequence of the two name sequences). Arguments are not compared
    (``argument_correctness`` does). Source: DeepEval ToolCorrectnessMetric (docs "metrics-tool-correctness":
    whether every expected tool was called; names by default, ``should_consider_ordering`` for order); MLflow
    ToolCallCorrectness with expectations. Extra calls lower ``trajectory_match`` (subset) and ``step_efficiency``,
    not this metric; they are listed in ``details["extra_calls"]``.
    """

    name = "tool_correctness"
    requires = CALLS_REQUIRE
    direction = "higher"
    value_range = (0.0, 1.0)
    uses_answer = False
    Options = ToolCorrectnessOptions
    formula = "|expected calls matched by name (one-to-one; ordered: LCS of names)| / |expected calls|"
    source = "DeepEval ToolCorrectnessMetric (should_consider_ordering); MLflow ToolCallCorrectness (expectations)"

    def compare(self, found: ComparedCalls) -> MetricResult | Unscored:
        expected, made = found.expected, found.made
        pairs = _name_lcs(expected, made) if self.options.ordered else found.by_name()
        details = {
            "expected": _expected_rows(found, pairs),
            "extra_calls": _extra(found, pairs),
            "ordered": self.options.ordered,
            "calls": len(made),
        }
        return MetricResult(value=len(pairs) / len(expected), details=details)


class ArgumentCorrectness(_CallsMetric):
    """Of the expected calls made (matched by name), the share whose arguments match the expected ones.

    Formula: |A| / |M|: M pairs expected and made calls by name one-to-one, preferring pairs whose arguments match
    (first a maximum matching on name and arguments, then by name among the rest: |M| is the most pairs by name),
    A the pairs whose arguments match under ``args_mode`` (exact, or subset/superset of keys, agentevals' modes)
    and ``args_overrides``. Unscored when no expected tool was called (no arguments to judge). Source: DeepEval
    ToolCorrectnessMetric's input-parameter check (``evaluation_params=[INPUT_PARAMETERS]``), deterministic;
    agentevals ``tool_args_match_mode`` for the modes.
    """

    name = "argument_correctness"
    requires = CALLS_REQUIRE
    direction = "higher"
    value_range = (0.0, 1.0)
    uses_answer = False
    Options = CallOptions
    formula = "|name-matched calls whose arguments match| / |expected calls matched by name|"
    source = "DeepEval ToolCorrectnessMetric (INPUT_PARAMETERS); agentevals tool_args_match_mode"

    def compare(self, found: ComparedCalls) -> MetricResult | Unscored:
        expected, made = found.expected, found.made
        full = found.matching(self.options)
        paired = set(full.values())
        rest_e = [e for e in range(len(expected)) if e not in full]
        rest_m = [m for m in range(len(made)) if m not in paired]
        by_name = pairing(rest_e, rest_m, lambda e, m: expected[rest_e[e]].name == made[rest_m[m]].name)
        pairs = {**full, **{rest_e[e]: rest_m[m] for e, m in by_name.items()}}
        rows = _expected_rows(found, pairs)
        for row in rows:
            row["match"] = row["index"] in full
        details = {"calls": rows, "args_mode": self.options.args_mode}
        if not pairs:
            return Unscored(reason="no expected tool was called: no arguments to compare", details=details)
        return MetricResult(value=len(full) / len(pairs), details=details)


class TrajectoryMatchOptions(CallOptions):
    """Options of ``trajectory_match``."""

    mode: MatchMode = Field(
        "strict",
        description="strict: the same calls in the same order; unordered: the same calls in any order; subset: "
        "every made call is expected; superset: every expected call was made (agentevals' trajectory_match_mode).",
    )
    parallel_batches: bool = Field(
        False,
        description="strict only: tool_call steps that follow each other with no other step between (one model "
        "reply's parallel calls) are compared without order, as agentevals compares one message's tool calls.",
    )


def _batches(made: Sequence[MadeCall]) -> list[list[int]]:
    """Indices of ``made`` grouped into runs of adjacent trajectory steps."""
    groups: list[list[int]] = []
    for m, call in enumerate(made):
        if groups and made[groups[-1][-1]].index == call.index - 1:
            groups[-1].append(m)
        else:
            groups.append([m])
    return groups


class TrajectoryMatch(_CallsMetric):
    """1 when the trajectory's tool calls match the expected ones in the configured ``mode``, else 0.

    Modes (LangChain agentevals ``create_trajectory_match_evaluator``, ``trajectory_match_mode``; README "Agent
    trajectory match"): ``strict``: as many calls as expected, the i-th made call matches the i-th expected one
    (with ``parallel_batches``, the calls of one batch of adjacent tool_call steps in any order against the same
    number of expected calls); ``unordered``: a one-to-one matching covers both lists; ``superset``: it covers
    every expected call (extra calls allowed); ``subset``: it covers every made call (no call beyond the expected;
    missing ones allowed). Two calls match when their names are equal and their arguments match under
    ``args_mode``/``args_overrides``. agentevals compares chat messages (roles, and tool calls per assistant
    message); here the expected side is the flat list ``Sample.expected_tool_calls``, so strict compares the call
    sequence.
    """

    name = "trajectory_match"
    requires = CALLS_REQUIRE
    direction = "higher"
    value_range = (0.0, 1.0)
    uses_answer = False
    Options = TrajectoryMatchOptions
    formula = "1 if the made calls match the expected ones (strict | unordered | subset | superset), else 0"
    source = "LangChain agentevals create_trajectory_match_evaluator, trajectory_match_mode and tool_args_match_mode"

    def compare(self, found: ComparedCalls) -> MetricResult | Unscored:
        expected, made = found.expected, found.made
        if self.options.mode == "strict":
            matched, pairs = self._strict(found)
        else:
            pairs = found.matching(self.options)
            covers_expected, covers_made = len(pairs) == len(expected), len(pairs) == len(made)
            wanted = {"unordered": covers_expected and covers_made, "superset": covers_expected}
            matched = wanted.get(self.options.mode, covers_made)
        details = {
            "mode": self.options.mode,
            "args_mode": self.options.args_mode,
            "expected": _expected_rows(found, pairs),
            "extra_calls": _extra(found, pairs),
        }
        return MetricResult(value=float(matched), details=details)

    def _strict(self, calls: ComparedCalls) -> tuple[bool, dict[int, int]]:
        expected, made = calls.expected, calls.made
        groups = _batches(made) if self.options.parallel_batches else [[m] for m in range(len(made))]
        fits = calls.fits(self.options)
        pairs: dict[int, int] = {}
        start, ok = 0, len(made) == len(expected)
        for group in groups:
            if len(group) == 1:  # one call against at most one expected call: the pairing is that comparison
                if start < len(expected) and fits(start, group[0]):
                    pairs[start] = group[0]
                else:
                    ok = False
            else:
                slice_ = list(range(start, min(start + len(group), len(expected))))
                found = pairing(slice_, group, self._fits(fits, slice_, group))
                pairs.update({slice_[e]: group[m] for e, m in found.items()})
                ok = ok and len(found) == len(group)
            start += len(group)
        return ok, pairs

    @staticmethod
    def _fits(fits: Any, slice_: list[int], group: list[int]) -> Any:
        return lambda e, m: fits(slice_[e], group[m])


METRICS = [ToolCorrectness, ArgumentCorrectness, TrajectoryMatch, StepEfficiency, TokenEfficiency, LoopFree]


@hookimpl
def register_metrics(register):
    """Register the trajectory metrics: ``tool_correctness``, ``argument_correctness``, ``trajectory_match``,
    ``step_efficiency``, ``token_efficiency`` and ``loop_free``."""
    for cls in METRICS:
        register(cls)
