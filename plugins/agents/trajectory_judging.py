"""What the trajectory judges (``trajectory_goal``, ``step_blame_judge``) share: their options, the prompt of one
output, and one ask to the judge model that never guesses."""

from __future__ import annotations

from pydantic import Field

from ragassay import RAGOutput, Sample, Unscored
from ragassay.llm import JudgeOptions, fill

from .trajectory_prompts import render_trajectory


class TrajectoryJudgeOptions(JudgeOptions):
    """Options every trajectory judge has besides the judge model: how much of the trajectory it is shown."""

    max_text_chars: int = Field(
        600, ge=50, description="Each text of a step (a query, arguments, a result, a retrieved text, an output) is "
        "cut here; the question and the final answer at four times this."
    )  # fmt: skip
    max_steps: int = Field(60, ge=1, le=1000, description="At most this many steps are shown (the rest are counted).")


def judge_prompt(template: str, sample: Sample, output: RAGOutput, options: TrajectoryJudgeOptions) -> str:
    """``template`` filled with the question, the trajectory rendered compactly, and the answer (both cut)."""
    limit = options.max_text_chars * 4
    values = {
        "question": sample.question[:limit],
        "trajectory": render_trajectory(output, options.max_text_chars, options.max_steps),
        "answer": output.answer[:limit] if output.answer.strip() else "(no answer)",
    }
    return fill(template, values)


def no_trajectory(output: RAGOutput) -> Unscored | None:
    """Unscored when ``output`` carries no trajectory, else None."""
    if output.trajectory:
        return None
    return Unscored(reason="the output has no trajectory (RAGOutput.trajectory is empty): nothing to judge")
