"""The INFO thesis' RAG triad and correctness (seeds/002, sections 4.3-4.5), and its comprehensive score (Eq. 5.1).

- ``answer_relevancy``: two binary evaluation questions (section 4.5.1), 0-2 points scaled to [0, 1];
- ``context_relevancy``: two evaluation questions with partial marks (section 4.5.2), [0, 1] in steps of 0.125;
- ``faithfulness``: YES/NO with the few-shot prompt of Figure 4.4 (section 4.5.3), 1 or 0;
- ``holistic_correctness``: the holistic 1-5 rubric of section 4.5.4 (named so that it does not clash with
  GRAMMAR's Correct/Incorrect ``correctness`` judge);
- ``full_score``: Eq. 5.1 over the four (a derived metric; see :class:`FullScore` for the [0, 1] / [0, 2] reading).

The thesis prints the Figure 4.4 prompt, the evaluation questions and the correctness rubric; those are quoted
verbatim below. Its other prompt wording (the llama-index templates it used) is not printed, so the instruction
around the quoted questions is ragassay's own. Every judge call goes through the judge base
:class:`ragassay.llm.LLMJudging`: explanation first, validated, re-asked, then unscored with the raw reply.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragassay import DerivedMetric, Metric, MetricResult, RAGOutput, Sample, Unscored, hookimpl
from ragassay.llm import TEXT_RETRIES, JudgeOptions, LLMJudging, answer_text, asks, context_texts, fill, one_verdict

PROMPT_VERSION = "info-thesis-1"

#: Figure 4.4 of the thesis (seeds/002, section 4.4), verbatim: {query_str} is the answer, {context_str} the contexts.
FAITHFULNESS_PROMPT = (
    "Please tell if a given piece of information "
    "is supported by the context.\n"
    "You need to answer with either YES or NO.\n"
    "Answer YES if any of the context supports the information, even "
    "if most of the context is unrelated. "
    "Some examples are provided below. \n\n"
    "Information: Apple pie is generally double-crusted.\n"
    "Context: An apple pie is a fruit pie in which the principal filling "
    "ingredient is apples. \n"
    "Apple pie is often served with whipped cream, ice cream "
    "('apple pie à la mode'), custard or cheddar cheese.\n"
    "It is generally double-crusted, with pastry both above "
    "and below the filling; the upper crust may be solid or "
    "latticed (woven of crosswise strips).\n"
    "Answer: YES\n"
    "Information: Apple pies tastes bad.\n"
    "Context: An apple pie is a fruit pie in which the principal filling "
    "ingredient is apples. \n"
    "Apple pie is often served with whipped cream, ice cream "
    "('apple pie à la mode'), custard or cheddar cheese.\n"
    "It is generally double-crusted, with pastry both above "
    "and below the filling; the upper crust may be solid or "
    "latticed (woven of crosswise strips).\n"
    "Answer: NO\n"
    "Information: {query_str}\n"
    "Context: {context_str}\n"
    "Answer: "
)

#: Section 4.5.1's evaluation questions (verbatim) in ragassay's instruction.
ANSWER_RELEVANCY_PROMPT = (
    "Your task is to evaluate how relevant a response is to a user's query by answering two evaluation questions:\n"
    "1. Does the provided response match the subject matter of the user's query?\n"
    "2. Does the provided response attempt to address the focus or perspective of the user's query?\n"
    "Each question is scored on a binary scale: 1 point for yes, 0 for no. First give your feedback on both "
    "questions, then the points of each.\n\n"
    "Query:\n{query}\n\nResponse:\n{response}\n"
)

#: Section 4.5.2's evaluation questions (verbatim) in ragassay's instruction; quarter points per question.
CONTEXT_RELEVANCY_PROMPT = (
    "Your task is to evaluate how relevant the context retrieved from the document sources is to a user's query by "
    "answering two evaluation questions:\n"
    "1. Does the retrieved context match the subject matter of the user's query?\n"
    "2. Can the retrieved context be used exclusively to provide a full answer to the user's query?\n"
    "Each question is worth 1 point; partial marks are allowed: give 0, 0.25, 0.5, 0.75 or 1 point per question. "
    "First give your feedback on both questions, then the points of each.\n\n"
    "Query:\n{query}\n\nContext:\n{context}\n"
)

#: Section 4.5.4's holistic rubric (verbatim sentences) in ragassay's instruction.
CORRECTNESS_PROMPT = (
    "Your task is to evaluate the accuracy and relevance of a generated answer relative to a reference answer for "
    "a user's query, with a holistic score from 1 to 5. Scores of 1 indicate irrelevance or incorrect information. "
    "Intermediate scores (2-3) are given for responses that are relevant but contain factual inaccuracies. Scores "
    "of 4 and 5 are reserved for answers that are both relevant and factually accurate, with higher scores "
    "indicating greater precision and completeness. First explain your evaluation, then give the score.\n\n"
    "Query:\n{query}\n\nReference answer:\n{reference}\n\nGenerated answer:\n{answer}\n"
)


class TriadOptions(JudgeOptions):
    """Options of the thesis' LLM metrics."""

    prompt_version: Literal["info-thesis-1"] = Field(
        PROMPT_VERSION, description="Version of the prompts (part of the judge's identity)."
    )
    max_context_chars: int = Field(
        16000, ge=100, description="Contexts beyond this many characters are cut from the prompt (noted in details)."
    )


class FaithfulnessOptions(TriadOptions):
    """Options of the faithfulness metric."""

    reply: Literal["structured", "text"] = Field(
        "structured",
        description="'structured': explanation, then answer YES/NO as structured output; 'text': the Figure 4.4 "
        "prompt alone, the first whole-word YES or NO of a free-text reply decides.",
    )


# ---- replies (explanation first) -------------------------------------------------------------------------------


class RelevancyPoints(BaseModel):
    """Answer relevancy: feedback first, then one binary point per evaluation question."""

    feedback: str = Field(description="Feedback on both evaluation questions, before the points.")
    subject_matter: int = Field(ge=0, le=1, description="Question 1: 1 if the response matches the subject matter.")
    focus: int = Field(ge=0, le=1, description="Question 2: 1 if the response addresses the query's focus.")


class ContextPoints(BaseModel):
    """Context relevancy: feedback first, then partial marks (quarter points) per evaluation question."""

    feedback: str = Field(description="Feedback on both evaluation questions, before the points.")
    subject_matter: float = Field(ge=0, le=1, description="Question 1: 0, 0.25, 0.5, 0.75 or 1.")
    full_answer: float = Field(ge=0, le=1, description="Question 2: 0, 0.25, 0.5, 0.75 or 1.")

    @field_validator("subject_matter", "full_answer")
    @classmethod
    def _quarters(cls, value: float) -> float:
        if abs(value * 4 - round(value * 4)) > 1e-9:
            raise ValueError("points must be 0, 0.25, 0.5, 0.75 or 1")
        return value


class SupportVerdict(BaseModel):
    """Faithfulness: the explanation first, then YES or NO."""

    explanation: str = Field(description="Whether and where the context supports the information, before the answer.")
    answer: str = Field(description="YES if any of the context supports the information, otherwise NO.")

    @field_validator("answer", mode="before")
    @classmethod
    def _yes_or_no(cls, value: Any) -> str:
        return one_verdict(value, ["yes", "no"]).upper()


class CorrectnessScore(BaseModel):
    """Holistic correctness: the explanation first, then the score 1-5."""

    explanation: str = Field(description="How accurate and relevant the generated answer is, before the score.")
    score: int = Field(ge=1, le=5, description="Holistic score from 1 (irrelevant or incorrect) to 5.")


# ---- metrics ---------------------------------------------------------------------------------------------------


class _TriadMetric(LLMJudging, Metric):
    """Shared plumbing: contexts for the prompt, the result with its details."""

    Options = TriadOptions

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        raise NotImplementedError("an LLM metric is asynchronous: use ascore")

    def contexts(self, output: RAGOutput) -> tuple[str, bool] | Unscored:
        """The retrieved contexts joined by blank lines (cut at max_context_chars), and whether they were cut."""
        if output.retrieved is False:
            return Unscored(reason="system did not retrieve (retrieved=False)")
        if not output.contexts:
            return Unscored(reason="no retrieved contexts to judge")
        joined = "\n\n".join(output.contexts)
        limit = self.options.max_context_chars
        return joined[:limit], len(joined) > limit

    def assumed_context(self, sample: Sample, hints: Any) -> str | None:
        """The contexts a call_pattern assumes, joined and cut as :meth:`contexts` does (None: not known)."""
        texts = context_texts(sample, hints)
        return None if texts is None else "\n\n".join(texts)[: self.options.max_context_chars]

    def result(self, value: float, explanation: str, **details: Any) -> MetricResult:
        """The value with the judge's explanation, identity and the given details."""
        return MetricResult(value=value, details={"explanation": explanation, "judge": self.identity, **details})


class AnswerRelevancy(_TriadMetric):
    """Answer relevancy (INFO thesis, seeds/002 section 4.5.1): two binary evaluation questions, 0-2 points / 2.

    Questions (verbatim): "Does the provided response match the subject matter of the user's query?" and "Does
    the provided response attempt to address the focus or perspective of the user's query?" "Each aspect is scored
    on a binary scale, contributing to a maximum score of 2 points."
    """

    name = "answer_relevancy"
    requires = frozenset({"question", "answer"})
    formula = "(points(subject matter) + points(focus)) / 2, each point 0 or 1"
    source = "INFO thesis (seeds/002), section 4.5.1 Answer Relevancy"
    direction = "higher"
    value_range = (0.0, 1.0)

    def prompt_text(self) -> str:
        return ANSWER_RELEVANCY_PROMPT

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One structured ask per sample."""
        prompt = fill(ANSWER_RELEVANCY_PROMPT, {"query": sample.question, "response": answer_text(hints)})
        return asks(self.judge_model(), [prompt], RelevancyPoints)

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        prompt = fill(ANSWER_RELEVANCY_PROMPT, {"query": sample.question, "response": output.answer})
        reply = await self.ask([{"role": "user", "content": prompt}], RelevancyPoints)
        if reply.parsed is None:
            return self.unusable(reply)
        p = reply.parsed
        return self.result((p.subject_matter + p.focus) / 2, p.feedback, subject_matter=p.subject_matter, focus=p.focus)


class ContextRelevancy(_TriadMetric):
    """Context relevancy (INFO thesis, seeds/002 section 4.5.2): two questions with partial marks, [0, 1].

    Questions (verbatim): "Does the retrieved context match the subject matter of the user's query?" and "Can the
    retrieved context be used exclusively to provide a full answer to the user's query?" "Each question is worth 1
    point ... this metric allows for partial marks, so the score scales from 0.125 to 1": quarter points per
    question, averaged, give exactly that 0.125 granularity.
    """

    uses_answer = False  # question, contexts and references only

    name = "context_relevancy"
    requires = frozenset({"question", "contexts"})
    formula = "(points(subject matter) + points(full answer)) / 2, each point in {0, 0.25, 0.5, 0.75, 1}"
    source = "INFO thesis (seeds/002), section 4.5.2 Context Relevancy"
    direction = "higher"
    value_range = (0.0, 1.0)

    def prompt_text(self) -> str:
        return CONTEXT_RELEVANCY_PROMPT

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One structured ask per sample with retrieved contexts."""
        context = self.assumed_context(sample, hints)
        if not context:
            return None if context is None else asks(self.judge_model(), [])
        return asks(
            self.judge_model(),
            [fill(CONTEXT_RELEVANCY_PROMPT, {"query": sample.question, "context": context})],
            ContextPoints,
        )

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        contexts = self.contexts(output)
        if isinstance(contexts, Unscored):
            return contexts
        context, cut = contexts
        prompt = fill(CONTEXT_RELEVANCY_PROMPT, {"query": sample.question, "context": context})
        reply = await self.ask([{"role": "user", "content": prompt}], ContextPoints)
        if reply.parsed is None:
            return self.unusable(reply)
        p = reply.parsed
        value = (p.subject_matter + p.full_answer) / 2
        return self.result(
            value, p.feedback, subject_matter=p.subject_matter, full_answer=p.full_answer, contexts_cut=cut
        )


class Faithfulness(_TriadMetric):
    """Faithfulness (INFO thesis, seeds/002 section 4.5.3, prompt Figure 4.4): 1 if the contexts support the answer.

    "Evaluators answer with "YES" or "NO" to indicate whether any part of the context supports the information
    given in the response." The Figure 4.4 few-shot prompt is used verbatim with the answer as the information and
    the retrieved contexts as the context. The verdict is a whole word: ``NO`` inside ``NOT`` or ``KNOWN`` is none.
    """

    name = "faithfulness"
    requires = frozenset({"answer", "contexts"})
    Options = FaithfulnessOptions
    formula = "1 if the judge answers YES (the contexts support the answer), 0 if NO"
    source = "INFO thesis (seeds/002), section 4.5.3 Faithfulness, prompt Figure 4.4"
    direction = "higher"
    value_range = (0.0, 1.0)

    def prompt_text(self) -> str:
        return f"reply={self.options.reply}\n{FAITHFULNESS_PROMPT}"

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One ask per sample with retrieved contexts (structured, or free text re-asked without a verdict)."""
        context = self.assumed_context(sample, hints)
        if not context:
            return None if context is None else asks(self.judge_model(), [])
        prompt = fill(FAITHFULNESS_PROMPT, {"query_str": answer_text(hints), "context_str": context})
        if self.options.reply == "text":
            return asks(self.judge_model(), [prompt], retries=TEXT_RETRIES)
        return asks(self.judge_model(), [prompt], SupportVerdict)

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        contexts = self.contexts(output)
        if isinstance(contexts, Unscored):
            return contexts
        context, cut = contexts
        prompt = fill(FAITHFULNESS_PROMPT, {"query_str": output.answer, "context_str": context})
        messages = [{"role": "user", "content": prompt}]
        if self.options.reply == "text":
            reply = await self.ask_text(messages, ["yes", "no"])
            verdict, explanation = reply.parsed, reply.raw
        else:
            reply = await self.ask(messages, SupportVerdict)
            verdict = reply.parsed.answer.lower() if reply.parsed is not None else None
            explanation = reply.parsed.explanation if reply.parsed is not None else ""
        if verdict is None:
            return self.unusable(reply)
        return self.result(1.0 if verdict == "yes" else 0.0, explanation, verdict=verdict.upper(), contexts_cut=cut)


class HolisticCorrectness(_TriadMetric):
    """Correctness on the thesis' holistic 1-5 rubric (INFO thesis, seeds/002 section 4.5.4), against the reference.

    Rubric (verbatim): "Scores of 1 indicate irrelevance or incorrect information. Intermediate scores (2-3) are
    given for responses that are relevant but contain factual inaccuracies. Scores of 4 and 5 are reserved for
    answers that are both relevant and factually accurate, with higher scores indicating greater precision and
    completeness." Not rescaled (1-5), so means compare with the thesis; ``full_score`` maps it to [0, 1].
    """

    name = "holistic_correctness"
    requires = frozenset({"question", "reference_answers", "answer"})
    formula = "judge's holistic score in {1, ..., 5} against the reference answer"
    source = "INFO thesis (seeds/002), section 4.5.4 Correctness"
    direction = "higher"
    value_range = (1.0, 5.0)

    def prompt_text(self) -> str:
        return CORRECTNESS_PROMPT

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One structured ask per sample with reference answers."""
        if not sample.reference_answers:
            return asks(self.judge_model(), [])
        reference = " | ".join(sample.reference_answers)
        values = {"query": sample.question, "reference": reference, "answer": answer_text(hints)}
        return asks(self.judge_model(), [fill(CORRECTNESS_PROMPT, values)], CorrectnessScore)

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if not sample.reference_answers:
            return Unscored(reason="sample has no reference_answers")
        values = {"query": sample.question, "reference": " | ".join(sample.reference_answers), "answer": output.answer}
        reply = await self.ask([{"role": "user", "content": fill(CORRECTNESS_PROMPT, values)}], CorrectnessScore)
        if reply.parsed is None:
            return self.unusable(reply)
        return self.result(float(reply.parsed.score), reply.parsed.explanation)


# ---- Eq. 5.1 ---------------------------------------------------------------------------------------------------


class FullScoreOptions(BaseModel):
    """Options of full_score: the labels of its four inputs, how correctness is scaled, which reading of Eq. 5.1."""

    model_config = ConfigDict(extra="forbid")

    answer_relevancy: str = Field("answer_relevancy", description="Label of the answer relevancy metric.")
    correctness: str = Field("holistic_correctness", description="Label of the correctness metric.")
    faithfulness: str = Field("faithfulness", description="Label of the faithfulness metric.")
    context_relevancy: str = Field("context_relevancy", description="Label of the context relevancy metric.")
    correctness_range: tuple[float, float] = Field(
        (1.0, 5.0), description="[low, high] of the correctness metric; mapped to [0, 1] by (c - low) / (high - low)."
    )
    reading: Literal["text", "printed"] = Field(
        "text",
        description="'text': the thesis' 'full score 1, split evenly' reading, (generation mean + context) / 2 in "
        "[0, 1]; 'printed': Eq. 5.1 as printed, generation mean + context in [0, 2].",
    )

    @field_validator("correctness_range")
    @classmethod
    def _ordered(cls, value: tuple[float, float]) -> tuple[float, float]:
        if not value[0] < value[1]:
            raise ValueError("correctness_range must be [low, high] with low < high")
        return value


class FullScore(DerivedMetric):
    """The INFO thesis' comprehensive score (seeds/002, section 5.3, Eq. 5.1) over the triad and correctness.

    Eq. 5.1 as printed: fullscore = (answer relevancy + correctness + faithfulness) / 3 + context relevancy, which
    ranges over [0, 2]; the text says "If we set the full score as 1, we can split it evenly between the generation
    and retrieval phases, assigning 0.5 to each", i.e. half of it. Default ``reading = "text"``: the [0, 1] score
    ``((ar + c' + f) / 3 + cr) / 2``; ``reading = "printed"`` gives the printed [0, 2] formula. Correctness is
    mapped to [0, 1] first, ``c' = (c - 1) / 4`` for the 1-5 rubric (the thesis does not say how; see the docs).
    """

    name = "full_score"
    Options = FullScoreOptions
    formula = "((answer_relevancy + (correctness - 1) / 4 + faithfulness) / 3 + context_relevancy) / 2"
    source = "INFO thesis (seeds/002), section 5.3, Eq. 5.1"
    direction = "higher"
    value_range = (0.0, 1.0)

    @classmethod
    def declared(cls, options: FullScoreOptions) -> tuple[str, tuple[float | None, float | None]]:
        return "higher", (0.0, 1.0) if options.reading == "text" else (0.0, 2.0)

    def __init__(self, options: BaseModel | None = None, **kwargs: Any):
        super().__init__(options, **kwargs)
        self.direction, self.value_range = self.declared(self.options)

    def _labels(self) -> dict[str, str]:
        aspects = ("answer_relevancy", "correctness", "faithfulness", "context_relevancy")
        return {aspect: getattr(self.options, aspect) for aspect in aspects}

    def inputs(self) -> list[str]:
        return sorted(set(self._labels().values()))

    def derive(self, values: dict[str, float | None]) -> MetricResult | Unscored:
        labels = self._labels()
        missing = [label for label in labels.values() if values.get(label) is None]
        if missing:
            return Unscored(reason=f"input metric(s) unscored for this output: {', '.join(sorted(set(missing)))}")
        got = {aspect: float(values[label]) for aspect, label in labels.items()}
        low, high = self.options.correctness_range
        correctness = (got["correctness"] - low) / (high - low)
        generation = (got["answer_relevancy"] + correctness + got["faithfulness"]) / 3
        value = generation + got["context_relevancy"]
        if self.options.reading == "text":
            value /= 2
        return MetricResult(
            value=value,
            details={
                **got,
                "correctness_scaled": correctness,
                "generation": generation,
                "reading": self.options.reading,
            },
        )


@hookimpl
def register_metrics(register):
    """Register the thesis' triad, holistic correctness and full score."""
    for cls in (AnswerRelevancy, ContextRelevancy, Faithfulness, HolisticCorrectness, FullScore):
        register(cls)
