"""The prompts of the trajectory judges (ragassay's own wording, versioned) and how a trajectory is shown to them.

- :data:`GOAL_PROMPT` (``trajectory_goal``): did the agent achieve the user's goal, given the question, the
  trajectory and the answer. Peers: LangChain agentevals' trajectory LLM-as-judge (``TRAJECTORY_ACCURACY_PROMPT``,
  ``agentevals/trajectory/llm.py``: a rubric of logical steps, progression, efficiency) and DeepEval's
  TaskCompletionMetric (the task and the outcome read from the trace, then their alignment). Here the verdict is
  the outcome for the user only (an inefficient trajectory that reaches the goal achieves it; efficiency has its
  own metrics), on three levels.
- :data:`BLAME_PROMPT` (``step_blame_judge``): the first step at which the trajectory went wrong, of one of the
  kinds of issue 40's step blame (a wrong tool, a retrieval that missed what the question needs, a tool error, a
  loop, an answer unsupported by what was retrieved, no answer), after the failure-step attribution of Zhang et al.
  (2025), "Which Agent Causes Task Failures and When?" (arXiv:2505.00212: the decisive error step of a failed
  trajectory, judged step by step).

Every reply is structured output with the explanation before the verdict, validated and re-asked. Change the
matching version whenever a prompt, its reply model or the rendering changes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ragassay import RAGOutput, Step

GOAL_VERSION = "ragassay-trajectory-goal-1"
BLAME_VERSION = "ragassay-step-blame-1"

GOAL_PROMPT = """You judge whether an AI agent achieved what the user asked for.

Below are the user's question, the agent's trajectory (its steps in order: model calls, retrievals with what they \
returned, tool calls with their results or errors, nested agents) and its final answer. Decide whether the user's \
goal was achieved:
- "yes": the final answer gives everything the user asked for, and it rests on what the agent retrieved or what \
its tools returned;
- "partly": the answer gives part of what was asked, or leaves a gap that the trajectory shows (a part never looked \
up, a failed tool call the answer glosses over);
- "no": the answer does not give what was asked: a refusal although the steps found what was needed, an answer \
that nothing in the trajectory supports, an answer to another question, or no answer.
Judge the outcome for the user, not the style or the number of steps: an inefficient trajectory that reaches the \
goal is "yes". Judge by the texts shown, never by what you know. Write a short explanation first, then the verdict.

Question:
{question}

Trajectory:
{trajectory}

Final answer:
{answer}
"""

BLAME_PROMPT = """You find the first step at which an AI agent's trajectory went wrong.

Below are the user's question, the agent's trajectory (its steps numbered from 1: model calls, retrievals with what \
they returned, tool calls with their results or errors, nested agents) and its final answer. Go through the steps \
in order and name the first one where the agent went wrong, with the kind of failure:
- "wrong_tool": a tool call (or retrieval) that cannot serve the question: the wrong tool, or arguments that cannot \
find what is needed;
- "missed_hop": a retrieval (or search tool call) that missed a piece of information the question needs: what it \
returned does not contain it, and no later step finds it;
- "tool_error": a step that ended with an error the agent did not recover from;
- "loop": the agent repeats the same call or query without making progress (name the first repeat);
- "unsupported_answer": the final answer states something that nothing retrieved or returned supports, or \
contradicts it (name the answer step, or the model call that wrote it);
- "no_answer": the agent gives no answer, or refuses, although its steps found what was needed (name the answer \
step or the model call that wrote it; no step when there is none);
- "ok": nothing went wrong: the answer gives what was asked and rests on what was found (no step).
Write a short explanation first; then the failure, the number of the step (null for "ok") and one sentence saying \
what went wrong at that step.

Question:
{question}

Trajectory:
{trajectory}

Final answer:
{answer}
"""


def _cut(text: Any, limit: int) -> str:
    text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} more characters]"


def _depths(trajectory: Sequence[Step]) -> dict[str, int]:
    depths: dict[str, int] = {}
    for step in trajectory:
        depths[step.id] = depths.get(step.parent_id, -1) + 1 if step.parent_id is not None else 0
    return depths


def _retrieved(step: Step, texts: dict[str, str], limit: int) -> list[str]:
    lines = []
    for rank, cid in enumerate(step.context_ids, start=1):
        text = texts.get(cid)
        lines.append(f"  ({rank}) {cid}: {_cut(text, limit)}" if text is not None else f"  ({rank}) {cid}")
    return lines or ["  (nothing retrieved)"]


def render_step(step: Step, texts: dict[str, str], limit: int) -> list[str]:
    """The lines of one step (without its number): what it did and what came of it, texts cut at ``limit``."""
    name = f" {step.name}" if step.name else ""
    error = [f"  ERROR: {_cut(step.error, limit)}"] if step.error else []
    if step.kind == "retrieval":
        return [f"retrieval{name}: query {_cut(step.query or '', limit)!r}", *_retrieved(step, texts, limit), *error]
    if step.kind == "tool_call":
        arguments = _cut(step.arguments or {}, limit)
        result = [] if step.result is None else [f"  result: {_cut(step.result, limit)}"]
        return [f"tool_call{name}({arguments})", *result, *error]
    if step.kind == "model_call":
        said = [] if step.output is None else [f"  output: {_cut(step.output, limit)}"]
        return [f"model_call{name}", *said, *error]
    if step.kind == "answer":
        return [f"answer: {_cut(step.output or '', limit)}", *error]
    return [f"agent{name} (its steps follow, indented)", *error]


def render_trajectory(output: RAGOutput, limit: int, max_steps: int) -> str:
    """The trajectory as numbered lines ``[n] ...`` (nested agents' steps indented), each text cut at ``limit``;
    retrieved ids shown with their text where the output's contexts hold it; at most ``max_steps`` steps."""
    texts = dict(zip(output.context_ids, output.contexts))
    depths, lines = _depths(output.trajectory), []
    for number, step in enumerate(output.trajectory[:max_steps], start=1):
        indent = "    " * depths.get(step.id, 0)
        first, *rest = render_step(step, texts, limit)
        lines += [f"{indent}[{number}] {first}", *(indent + line for line in rest)]
    hidden = len(output.trajectory) - max_steps
    if hidden > 0:
        lines.append(f"[... {hidden} more steps not shown]")
    return "\n".join(lines) if lines else "(no steps)"
