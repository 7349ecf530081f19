"""``answerability_behaviour``: did the system do what the turn's answerability label asks for?

The behaviour of a reply is one of ``answer`` (it gives the information asked for, in full or in part), ``refuse``
(it gives none: cannot answer, does not know, not in the sources) or ``clarify`` (it asks the user what they mean
instead of answering). The turn's label (``Sample.answerability``, MTRAG's enrichment) says which one fits:

======================  ==========
label                   expected
======================  ==========
answerable              answer
unanswerable            refuse
underspecified          clarify
partial                 answer
======================  ==========

The value is 1.0 when the behaviour is the expected one, else 0.0; its mean over the turns of one label is that
class's recall, and the mean of the per-class recalls the balanced accuracy (docs/metrics.md). A turn without a
label is unscored with the reason, before any model call. Idea: MTRAG (Katsis et al., 2025, arXiv:2501.03468:
the answerability enrichment of its tasks, and the "I don't know" behaviour it measures on unanswerable turns);
the prompt is ragassay's own.

``answerability_behaviour`` asks the judge model (explanation first, the behaviour validated and re-asked,
unscored with the raw reply when still unusable); ``answerability_behaviour_offline`` uses the phrase lists of
:mod:`.answerability_offline`. Details: ``{"behaviour", "label", "expected", "explanation"}``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from ragassay import MetricResult, RAGOutput, Sample, Unscored, hookimpl
from ragassay.llm import LLMJudging, answer_text, asks, fill, one_verdict

from .answerability_base import BEHAVIOURS, BehaviourMetric, scored, unlabelled
from .answerability_offline import AnswerabilityBehaviourOffline
from .turn_judging import TurnJudgeOptions
from .turn_prompts import BEHAVIOUR_PROMPT, BEHAVIOUR_VERSION, render_history


class Behaviour(BaseModel):
    """The judge's reply: the explanation, then what the assistant did."""

    explanation: str = Field(description="What the reply does, written before the behaviour.")
    behaviour: str = Field(description='"answer", "refuse" or "clarify".')

    @field_validator("behaviour", mode="before")
    @classmethod
    def _behaviour(cls, value: Any) -> str:
        return one_verdict(value, BEHAVIOURS)


class AnswerabilityBehaviour(LLMJudging, BehaviourMetric):
    """1 when the judge finds the reply's behaviour (answer, refuse, clarify) to be the one the turn's
    answerability label expects, else 0 (MTRAG's answerability classes; one judge call per output)."""

    name = "answerability_behaviour"
    requires = frozenset({"answerability", "question", "answer"})

    class Options(TurnJudgeOptions):
        """Options of ``answerability_behaviour``."""

        prompt_version: Literal["ragassay-answerability-1"] = Field(
            BEHAVIOUR_VERSION, description="Version of the behaviour prompt (part of the identity)."
        )

    def prompt_text(self) -> str:
        return f"{self.options.max_text_chars}\n{BEHAVIOUR_PROMPT}"

    def _prompt(self, sample: Sample, answer: str) -> str:
        limit = self.options.max_text_chars
        values = {"history": render_history(sample.history, limit), "question": sample.question}
        return fill(BEHAVIOUR_PROMPT, {**values, "answer": answer[:limit]})

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if (skipped := unlabelled(sample)) is not None:
            return skipped
        parsed, failed = await self.ask_once(self._prompt(sample, output.answer), Behaviour, "behaviour judge reply")
        if failed is not None:
            return failed
        return scored(parsed.behaviour, sample.answerability, parsed.explanation, judge=self.identity)

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One call per labelled turn (none for a turn without a label)."""
        prompts = [self._prompt(sample, answer_text(hints))] if sample.answerability is not None else []
        return asks(self.judge_model(), prompts, Behaviour)


@hookimpl
def register_metrics(register):
    """Register ``answerability_behaviour`` and ``answerability_behaviour_offline``."""
    register(AnswerabilityBehaviour)
    register(AnswerabilityBehaviourOffline)
