"""Where each conversation first went wrong, per system, and a per-system summary of it.

The rule that says a turn failed is, by default, the run's ``turn_blame`` metric (found by its label or its
component name): value 1 where the turn is fine, 0 where it failed, with details ``{"blame": "ok" |
"retrieval" | "context_loss" | "generation" | ..., "reason": ..., "turn": ...}``; the first turn whose value is
0 is the conversation's first failure, with its blame and reason. Without one (or when asked), a metric and a
threshold: a turn fails when its value is below the threshold (above it for a lower-is-better metric). A turn the
rule's metric left unscored, or whose output failed or is missing, is counted as unscored, never as a failure.
"""

from __future__ import annotations

import dataclasses
import math

from ..errors import ConfigError
from .conversations import conversation_turns
from .conversations_answerability import metric_columns

BLAME = "turn_blame"
FAILED = "failed"  # the blame of a failing turn whose details name none


@dataclasses.dataclass(frozen=True)
class FailureRule:
    """How a failing turn is told: by a blame metric (``threshold`` None: value 0 fails) or by a metric's
    threshold (``direction``: higher or lower is better)."""

    metric: str
    threshold: float | None = None
    direction: str = "higher"

    def describe(self) -> str:
        if self.threshold is None:
            return f"the first turn that {self.metric} blames (value 0)"
        sign = "above" if self.direction == "lower" else "below"
        return f"the first turn with {self.metric} {sign} {self.threshold:g}"

    def fails(self, value: float) -> bool:
        if self.threshold is None:
            return value < 1.0
        return value > self.threshold if self.direction == "lower" else value < self.threshold


@dataclasses.dataclass(frozen=True)
class FirstFailure:
    """One conversation of one system: its evaluated turns, the first failing one (None: none failed) with its
    question id, blame, reason and value, and how many of its turns the rule could not judge."""

    system: str
    conversation_id: str
    turns: int
    turn: int | None
    question_id: str | None
    blame: str | None
    reason: str
    value: float | None
    unscored: int


@dataclasses.dataclass(frozen=True)
class ConversationSummary:
    """One system over its conversations: how many, how many turns, how many failed and at which turn on average,
    the blame of each first failure, counted, and the turns the rule could not judge."""

    system: str
    conversations: int
    turns: int
    failed: int
    mean_first_turn: float | None
    blames: dict[str, int]
    unscored: int


def failure_rule(run, metric: str | None = None, threshold: float | None = None) -> FailureRule | None:
    """The rule of :func:`first_failures`: ``metric`` and ``threshold`` when given (a blame metric needs no
    threshold), else the run's ``turn_blame`` column; None when the run has none and none is given."""
    if threshold is not None and not math.isfinite(threshold):
        raise ConfigError(f"the failure threshold must be a finite number, not {threshold!r}")
    if metric is None:
        if threshold is not None:
            raise ConfigError("a failure threshold needs its metric: give --metric with --threshold")
        found = metric_columns(run, BLAME)
        return FailureRule(found[0]) if found else None
    if metric not in run.columns:
        raise ConfigError(f"metric {metric!r} is not in this run; it scored: {', '.join(run.columns) or 'nothing'}")
    if threshold is None:
        if metric in metric_columns(run, BLAME):
            return FailureRule(metric)
        raise ConfigError(f"{metric!r} is not a turn_blame metric: give the threshold a turn fails below")
    return FailureRule(metric, float(threshold), run.direction(metric))


def first_failures(run, rule: FailureRule, systems: list[str] | None = None) -> list[FirstFailure]:
    """Per system (default: all, in run order) and conversation of ``run`` (in run order), its
    :class:`FirstFailure` by ``rule``."""
    details = _details(run, rule) if rule.threshold is None else {}
    found, turns = [], conversation_turns(run)
    for system in systems or run.systems:
        values = run.values(system, rule.metric)
        for cid, positions in turns.items():
            found.append(_first(run, rule, system, cid, positions, values, details))
    return found


def _details(run, rule: FailureRule) -> dict[tuple[str, str], dict]:
    """(system, question_id) -> the details of the blame metric's failing values (repeat 0)."""
    return {
        (r.system, r.question_id): r.details
        for r in run.records(kind="metric", label=rule.metric, repeat=0)
        if r.value is not None and rule.fails(r.value)
    }


def _first(run, rule: FailureRule, system: str, cid: str, positions: list[int], values, details) -> FirstFailure:
    unscored = sum(1 for i in positions if math.isnan(values[i]))
    for i in positions:
        value = float(values[i])
        if math.isnan(value) or not rule.fails(value):
            continue
        sample, qid = run.samples[i], run.question_ids[i]
        if rule.threshold is None:
            found = details.get((system, qid)) or {}
            blame, reason = str(found.get("blame") or FAILED), str(found.get("reason") or "")
        else:
            blame, reason = None, f"{rule.metric} = {value:.4g}"
        return FirstFailure(system, cid, len(positions), sample.turn, qid, blame, reason, value, unscored)
    return FirstFailure(system, cid, len(positions), None, None, None, "", None, unscored)


def summaries(failures: list[FirstFailure], systems: list[str]) -> list[ConversationSummary]:
    """Per system (in ``systems`` order), the :class:`ConversationSummary` of its first failures."""
    found = []
    for system in systems:
        mine = [f for f in failures if f.system == system]
        failed = [f for f in mine if f.turn is not None]
        blames: dict[str, int] = {}
        for f in failed:
            key = f.blame or FAILED
            blames[key] = blames.get(key, 0) + 1
        mean = sum(f.turn for f in failed) / len(failed) if failed else None
        turns, unscored = sum(f.turns for f in mine), sum(f.unscored for f in mine)
        found.append(ConversationSummary(system, len(mine), turns, len(failed), mean, blames, unscored))
    return found
