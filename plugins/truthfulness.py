"""Truthfulness and relevance on a 1-5 scale by an LLM evaluator (Kenneweg et al., seeds/003 section III-B).

The evaluator gets the paper's system prompt, the question, the answer and the reference article
(``reference_contexts``), which the answerer did not necessarily see, and replies with the structure of the paper's
function ``set_answer_evaluation`` ("Set the answer evaluation for truthfulness and relevance."), with an
``explanation`` first, then the two scores. The request goes through :func:`ragassay.llm.ask_structured`: OpenAI
``response_format`` json_schema by default, a forced call of the tool ``set_answer_evaluation`` (the paper's
function calling) with the generator's ``structured_mode = "tool"`` and always on Anthropic; the evaluator must
be a chat-capable generator. Both metrics stand on the judge base :class:`ragassay.llm.LLMJudging` (greedy
decoding by default, ``params``; an identity in the details). A reply that is not valid (a score outside 1-5, no
explanation) is re-asked with the error, then unscored with the raw reply.
``truthfulness`` and ``relevance`` make the same model call (the second is a response-cache hit), so asking for
both costs one call.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from ragassay import GeneratorRef, Metric, MetricResult, RAGOutput, Sample, Unscored, hookimpl
from ragassay.llm import JudgeOptions, LLMJudging, answer_text, asks, message_chars

SYSTEM_PROMPT = (
    "Your task is to evaluate answers given by a chatbot. You are provided the user query, the chatbot generated "
    "answer and a wikipedia article that contains information about the true answer. Given this information "
    "generate two scores from 1 to 5, where 5 is the best, for the chatbot generated answer, concerning relevance "
    "and truthfulness. Give a score of 1 for relevance if the answer is that the chatbot doesn't know."
)
TOOL_NAME = "set_answer_evaluation"
PROMPT_VERSION = "seeds003-1"


class _Evaluation(BaseModel):
    explanation: str = Field(description="Why these scores: the reasoning, written before the scores.")
    truthfulness: int = Field(ge=1, le=5, description="Set the truthfulness of the answer, from 1 to 5.")
    relevance: int = Field(ge=1, le=5, description="Set the relevance of the answer, from 1 to 5.")


#: The structured reply, named as the paper's function (the tool's name when the generator asks by forced tool).
AnswerEvaluation = create_model(
    TOOL_NAME, __base__=_Evaluation, __doc__="Set the answer evaluation for truthfulness and relevance."
)


class EvaluatorOptions(JudgeOptions):
    """Options of ``truthfulness`` and ``relevance`` (one evaluator request serves both)."""

    generator: GeneratorRef = Field(
        description="LLM generator acting as evaluator, chat-capable (openai, anthropic, local): a name or "
        "{ name, options } (required)."
    )
    prompt_version: Literal["seeds003-1"] = Field(
        PROMPT_VERSION, description="Version of the evaluation protocol (part of the evaluator's identity)."
    )
    system_prompt: str = Field(SYSTEM_PROMPT, description="The evaluator's system prompt (default: the paper's).")
    max_article_chars: int = Field(16000, ge=100, description="Article text beyond this is cut from the prompt.")


class _LLMScore(LLMJudging, Metric):
    """One aspect of the evaluator's structured reply (the paper's ``set_answer_evaluation``)."""

    Options = EvaluatorOptions
    requires_chat = True  # the paper's function calling: structured output on the provider's side
    aspect = ""
    requires = frozenset({"question", "answer", "reference_contexts"})
    formula = "score in {1,...,5} given by the evaluator's structured reply (explanation first)"
    source = "Kenneweg et al., seeds/003 section III-B (function-calling evaluation of truthfulness and relevance)"

    def prompt_text(self) -> str:
        return f"max_article_chars={self.options.max_article_chars}\n{self.options.system_prompt}"

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One structured ask per sample with reference contexts. ``truthfulness`` and ``relevance`` with the same
        options send the same request (``shared``): with the response cache on, the estimate counts it once."""
        if not sample.reference_contexts:
            return asks(self.judge_model(), [])
        pattern = asks(
            self.judge_model(),
            [""],
            AnswerEvaluation,
            extra_chars=message_chars(self._messages(sample, answer_text(hints))),
        )
        if pattern is not None:
            pattern.shared = f"{PROMPT_VERSION}:{self.options.model_dump_json()}"
        return pattern

    def _messages(self, sample: Sample, answer: str) -> list[dict[str, str]]:
        article = "\n\n".join(sample.reference_contexts)[: self.options.max_article_chars]
        user = f"User query: {sample.question}\n\nChatbot answer: {answer}\n\nArticle:\n{article}"
        return [{"role": "system", "content": self.options.system_prompt}, {"role": "user", "content": user}]

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if not sample.reference_contexts:
            return Unscored(reason="sample has no reference_contexts (the article the evaluator checks against)")
        reply = await self.ask(self._messages(sample, output.answer), AnswerEvaluation)
        if reply.parsed is None:
            return self.unusable(reply, "evaluator reply")
        evaluation = reply.parsed
        details = {"explanation": evaluation.explanation, "truthfulness": evaluation.truthfulness}
        details.update(relevance=evaluation.relevance, judge=self.identity)
        return MetricResult(value=float(getattr(evaluation, self.aspect)), details=details)

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        raise NotImplementedError("an LLM metric is asynchronous: use ascore")


class Truthfulness(_LLMScore):
    """Truthfulness of the answer against the reference article, 1-5, by an LLM evaluator (seeds/003)."""

    name = "truthfulness"
    direction = "higher"
    value_range = (1.0, 5.0)
    aspect = "truthfulness"


class Relevance(_LLMScore):
    """Relevance of the answer to the question, 1-5 (1 for "I don't know"), by an LLM evaluator (seeds/003)."""

    name = "relevance"
    direction = "higher"
    value_range = (1.0, 5.0)
    aspect = "relevance"


@hookimpl
def register_metrics(register):
    register(Truthfulness)
    register(Relevance)
