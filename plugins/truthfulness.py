"""Truthfulness and relevance on a 1-5 scale by LLM function calling (Kenneweg et al., seeds/003 section III-C).

The evaluator gets the question, the answer and the reference article (``reference_contexts``), which the
answerer did not necessarily see, and must call a tool that sets both scores. ``truthfulness`` and
``relevance`` make the same model call (the second is a response-cache hit), so asking for both costs one call.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ragassay import GeneratorRef, Metric, RAGOutput, Sample, Unscored, hookimpl

SYSTEM_PROMPT = (
    "Your task is to evaluate answers given by a chatbot. You are provided the user query, the chatbot generated "
    "answer and a wikipedia article that contains information about the true answer. Given this information "
    "generate two scores from 1 to 5, where 5 is the best, for the chatbot generated answer, concerning relevance "
    "and truthfulness. Give a score of 1 for relevance if the answer is that the chatbot doesn't know."
)
TOOL_NAME = "set_answer_evaluation"


class AnswerEvaluation(BaseModel):
    """Set the answer evaluation for truthfulness and relevance."""

    truthfulness: int = Field(ge=1, le=5, description="Set the truthfulness of the answer, from 1 to 5.")
    relevance: int = Field(ge=1, le=5, description="Set the relevance of the answer, from 1 to 5.")


class EvaluatorOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    generator: GeneratorRef = Field(description="LLM generator acting as evaluator: a name or { name, options }.")
    system_prompt: str = Field(SYSTEM_PROMPT, description="The evaluator's system prompt (default: the paper's).")
    max_article_chars: int = Field(16000, ge=100, description="Article text beyond this is cut from the prompt.")


class _LLMScore(Metric):
    Options = EvaluatorOptions
    aspect = ""
    formula = "score in {1,...,5} set by the evaluator's forced tool call"
    source = "Kenneweg et al., seeds/003 section III-C (function-calling evaluation of truthfulness and relevance)"

    async def ascore(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        if not sample.reference_contexts:
            return Unscored(reason="sample has no reference_contexts (the article the evaluator checks against)")
        evaluation = await self._evaluate(sample, output)
        return float(getattr(evaluation, self.aspect))

    async def _evaluate(self, sample: Sample, output: RAGOutput) -> AnswerEvaluation:
        generator = getattr(self, "_generator", None) or self._build_generator()
        article = "\n\n".join(sample.reference_contexts)[: self.options.max_article_chars]
        user = f"User query: {sample.question}\n\nChatbot answer: {output.answer}\n\nArticle:\n{article}"
        from ragassay.llm import ToolSpec

        tool = ToolSpec.from_model(AnswerEvaluation, name=TOOL_NAME)
        response = await generator.chat(
            [{"role": "system", "content": self.options.system_prompt}, {"role": "user", "content": user}],
            tools=[tool],
            tool_choice=TOOL_NAME,
        )
        call = response.tool_call(TOOL_NAME)
        if call is None:
            raise ValueError("the evaluator did not call set_answer_evaluation")
        return AnswerEvaluation.model_validate(call.arguments)

    def _build_generator(self):
        generator = self.context.build(self.options.generator).require_chat(f"metric {self.name}")
        self._generator = generator
        return generator

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
