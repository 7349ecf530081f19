"""``trajectory_goal``: an LLM judge of goal completion from the question, the trajectory and the answer, for
agents whose samples carry no expected trajectory (production traces, open tasks).

The judge reads the prompt :data:`~.trajectory_prompts.GOAL_PROMPT` (the trajectory rendered compactly, long texts
cut) and replies with an explanation, then a verdict ``yes`` (1.0), ``partly`` (0.5) or ``no`` (0.0). A reply that
is not one of the three is re-asked with the reason; one still unusable after the bounded re-asks, or a failed
judge model, is unscored with the raw reply. Details: ``verdict``, ``explanation``, ``judge`` (the identity),
``steps`` (how many the trajectory has).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from ragassay import Metric, MetricResult, RAGOutput, Sample, Unscored, hookimpl
from ragassay.llm import LLMJudging, one_verdict

from .trajectory_judging import TrajectoryJudgeOptions, judge_prompt, no_trajectory
from .trajectory_prompts import GOAL_PROMPT, GOAL_VERSION

VERDICTS = {"yes": 1.0, "partly": 0.5, "no": 0.0}


class GoalVerdict(BaseModel):
    """The judge's reply: the explanation first, then whether the user's goal was achieved."""

    explanation: str = Field(description="What the user wanted and what the agent delivered, before the verdict.")
    achieved: str = Field(description='"yes", "partly" or "no".')

    @field_validator("achieved", mode="before")
    @classmethod
    def _verdict(cls, value: Any) -> str:
        return one_verdict(value, list(VERDICTS))


class TrajectoryGoal(LLMJudging, Metric):
    """Did the agent achieve the user's goal: a judge reads the question, the trajectory and the answer.

    Formula: yes = 1, partly = 0.5, no = 0, the judge's verdict (explanation first, validated, re-asked; unscored
    with the raw reply when unusable). Source: ragassay's prompt (``ragassay-trajectory-goal-1``) after LangChain
    agentevals' trajectory LLM-as-judge (``create_trajectory_llm_as_judge``, TRAJECTORY_ACCURACY_PROMPT) and
    DeepEval's TaskCompletionMetric (task and outcome from the trace); issue 40.
    """

    name = "trajectory_goal"
    requires = frozenset({"question", "trajectory", "answer"})
    direction = "higher"
    value_range = (0.0, 1.0)
    formula = "judge verdict on the question, trajectory and answer: yes = 1, partly = 0.5, no = 0"
    source = "ragassay-trajectory-goal-1, after agentevals trajectory LLM-as-judge and DeepEval TaskCompletionMetric"

    class Options(TrajectoryJudgeOptions):
        """Options of ``trajectory_goal``."""

        prompt_version: Literal["ragassay-trajectory-goal-1"] = Field(
            GOAL_VERSION, description="Version of the goal prompt and its reply model (part of the identity)."
        )

    def prompt_text(self) -> str:
        return f"{self.options.max_text_chars} {self.options.max_steps}\n{GOAL_PROMPT}"

    def score(self, sample: Sample, output: RAGOutput) -> float:
        raise NotImplementedError("trajectory_goal asks a judge model: use ascore")

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if (missing := no_trajectory(output)) is not None:
            return missing
        prompt = judge_prompt(GOAL_PROMPT, sample, output, self.options)
        parsed, failed = await self.ask_once(prompt, GoalVerdict, "goal judge reply")
        if failed is not None:
            return failed
        details = {
            "verdict": parsed.achieved,
            "explanation": parsed.explanation,
            "judge": self.identity,
            "steps": len(output.trajectory),
        }
        return MetricResult(value=VERDICTS[parsed.achieved], details=details)


@hookimpl
def register_metrics(register):
    """Register ``trajectory_goal``."""
    register(TrajectoryGoal)
