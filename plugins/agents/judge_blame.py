"""``step_blame_judge``: a judge names the first step at which a trajectory went wrong, for samples without per-hop
gold (where ``step_blame`` decides exactly).

The judge reads :data:`~.trajectory_prompts.BLAME_PROMPT` (steps numbered from 1) and replies with an
explanation, then the failure (``ok``, ``wrong_tool``, ``missed_hop``, ``tool_error``, ``loop``,
``unsupported_answer``, ``no_answer``), the step's number and one sentence. The reply is validated against the
trajectory and re-asked with the reason when it is not usable:

- the step must exist (1..number of steps); ``ok`` names no step; every failure but ``no_answer`` names one;
- the step's kind must fit the failure: ``wrong_tool``, ``missed_hop`` and ``loop`` a tool call or a retrieval;
  ``unsupported_answer`` and ``no_answer`` the answer or a model call; ``tool_error`` any step but the answer.

Value 1.0 for ``ok``, else 0.0. Details (FORMATS40, shared with ``step_blame``): ``blame``, ``step`` (the step's
id or null), ``step_index`` (0-based or null), ``kind``, ``hop`` (null: a judge knows no hops), ``reason``; plus
``explanation`` and ``judge``. A reply still unusable after the bounded re-asks, or a failed judge model, is
unscored with the raw reply.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from ragassay import Metric, MetricResult, RAGOutput, Sample, Unscored, hookimpl
from ragassay.llm import LLMJudging, one_verdict

from .trajectory_judging import TrajectoryJudgeOptions, judge_prompt, no_trajectory
from .trajectory_prompts import BLAME_PROMPT, BLAME_VERSION

BLAMES = ("ok", "wrong_tool", "missed_hop", "tool_error", "loop", "unsupported_answer", "no_answer")
ACTIONS = ("tool_call", "retrieval")
WRITING = ("answer", "model_call")
#: the step kinds each failure may name (None: any kind but the answer)
FITS: dict[str, tuple[str, ...] | None] = {
    "wrong_tool": ACTIONS,
    "missed_hop": ACTIONS,
    "loop": ACTIONS,
    "unsupported_answer": WRITING,
    "no_answer": WRITING,
    "tool_error": None,
}


class _Blame(BaseModel):
    explanation: str = Field(description="The steps examined in order, written before the failure.")
    blame: str = Field(description="ok, wrong_tool, missed_hop, tool_error, loop, unsupported_answer or no_answer.")
    step: int | None = Field(None, description="The number of the first step that went wrong (null for ok).")
    reason: str = Field(description="One sentence: what went wrong at that step (or why nothing did).")

    @field_validator("blame", mode="before")
    @classmethod
    def _blame(cls, value: Any) -> str:
        return one_verdict(value, BLAMES)


def check_blame(blame: str, step: int | None, kinds: tuple[str, ...]) -> None:
    """ValueError with the reason when ``blame`` at ``step`` (1-based) does not fit a trajectory of ``kinds``."""
    if blame == "ok":
        if step is not None:
            raise ValueError('blame "ok" names no step: give step null')
        return
    if step is None:
        if blame == "no_answer":
            return
        raise ValueError(f'blame "{blame}" needs the number of the step that went wrong (1 to {len(kinds)})')
    if not 1 <= step <= len(kinds):
        raise ValueError(f"step {step} does not exist: the steps are numbered 1 to {len(kinds)}")
    kind, allowed = kinds[step - 1], FITS[blame]
    if (allowed is None and kind == "answer") or (allowed is not None and kind not in allowed):
        wanted = "any step but the answer" if allowed is None else " or ".join(allowed)
        article = "an" if kind[0] in "aeiou" else "a"
        raise ValueError(f'step {step} is {article} {kind} step; blame "{blame}" names {wanted}')


@functools.lru_cache(maxsize=256)
def blame_model(kinds: tuple[str, ...]) -> type[BaseModel]:
    """The reply model for a trajectory whose steps have ``kinds`` (validated by :func:`check_blame`)."""

    def _check(self: Any) -> Any:
        check_blame(self.blame, self.step, kinds)
        return self

    return create_model("StepBlame", __base__=_Blame, __validators__={"fits": model_validator(mode="after")(_check)})


class StepBlameJudge(LLMJudging, Metric):
    """The first step at which the trajectory went wrong, named by a judge: 1.0 when nothing did, else 0.0.

    Formula: 1 if the judge's blame is "ok", else 0; details name the step, its kind and the reason (module
    docstring). Source: ragassay's prompt (``ragassay-step-blame-1``) for issue 40's step-level blame, after the
    decisive-error-step attribution of Zhang et al. (2025), "Which Agent Causes Task Failures and When?",
    arXiv:2505.00212 (step-by-step judging of a trajectory).
    """

    name = "step_blame_judge"
    requires = frozenset({"question", "trajectory", "answer"})
    direction = "higher"
    value_range = (0.0, 1.0)
    formula = "1 if the judge finds no failing step, else 0 (the first failing step, its kind and reason in details)"
    source = "ragassay-step-blame-1; decisive error step after Zhang et al. 2025 (arXiv:2505.00212)"

    class Options(TrajectoryJudgeOptions):
        """Options of ``step_blame_judge``."""

        prompt_version: Literal["ragassay-step-blame-1"] = Field(
            BLAME_VERSION, description="Version of the blame prompt and its reply model (part of the identity)."
        )

    def prompt_text(self) -> str:
        return f"{self.options.max_text_chars} {self.options.max_steps}\n{BLAME_PROMPT}"

    def score(self, sample: Sample, output: RAGOutput) -> float:
        raise NotImplementedError("step_blame_judge asks a judge model: use ascore")

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if (missing := no_trajectory(output)) is not None:
            return missing
        kinds = tuple(step.kind for step in output.trajectory)
        prompt = judge_prompt(BLAME_PROMPT, sample, output, self.options)
        parsed, failed = await self.ask_once(prompt, blame_model(kinds), "blame judge reply")
        if failed is not None:
            return failed
        index = None if parsed.step is None else parsed.step - 1
        step = None if index is None else output.trajectory[index]
        details = {
            "blame": parsed.blame,
            "step": None if step is None else step.id,
            "step_index": index,
            "kind": None if step is None else step.kind,
            "hop": None,
            "reason": parsed.reason,
            "explanation": parsed.explanation,
            "judge": self.identity,
        }
        return MetricResult(value=1.0 if parsed.blame == "ok" else 0.0, details=details)


@hookimpl
def register_metrics(register):
    """Register ``step_blame_judge``."""
    register(StepBlameJudge)
