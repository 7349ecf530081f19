"""Reference-free baselines of GRAMMAR Table 1 (seeds/000 section 4.1, Appendix I, Table 6).

- ``ragas_fact`` (metric): the answer is decomposed into atomic statements, each statement gets a natural
  language inference verdict against the retrieved contexts (Table 6 "Ragas" prompt, explanation first), and the
  score is the share of statements the contexts support (RAGAS faithfulness, Es et al. 2023).
- ``selfcheck_qa`` (judge): four answers sampled at temperature 1.0 are compared with the system's answer (its
  temperature-0 answer) by the query-aware Table 6 "SelfCheck-QA" prompt; the answer is judged correct only if
  every sample agrees with it. A judge, not a metric: the paper scores it as a correct/incorrect detector
  (precision and recall in Table 1), and the verdict is all-or-nothing.

Both stand on the judge base :class:`ragassay.llm.LLMJudging`: structured replies through
:func:`ragassay.llm.ask_structured` (bounded corrective re-asks; an unusable reply makes the value unscored with the
raw reply, never a guess), greedy judge calls (``params``), an identity (``judge`` detail, ``judge_id``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from ragassay import (
    GenerationRequest,
    GeneratorRef,
    Judge,
    Judgement,
    Metric,
    MetricResult,
    RAGOutput,
    Sample,
    Unscored,
    hookimpl,
)
from ragassay.llm import JudgeOptions, LLMJudging, answer_text, asks, context_texts, fill, unbounded

#: RAGAS' statement-extraction prompt (Es et al. 2023, section 3, "Faithfulness"). GRAMMAR gives none for the
#: decomposition (it points to Chern et al. 2023), so RAGAS' own is used.
STATEMENT_PROMPT = (
    "Given a question and answer, create one or more statements from each sentence in the given answer.\n"
    "question: {question}\nanswer: {answer}"
)
#: GRAMMAR Table 6, "Ragas from (Es et al., 2023)", verbatim.
RAGAS_NLI_PROMPT = (
    "Natural language inference. Use only 'Yes' (1), 'No' (0) and 'Null' (-1) as verdict.\n"
    "context: {context}\nstatement: {statement}\nverdict:"
)
#: GRAMMAR Table 6, "SelfCheck-QA", verbatim.
SELFCHECK_QA_PROMPT = (
    "Query: {query}\nAnswer A: {answer}\nAnswer B: {stochastic_answer}\n"
    "Do both answers address the query with equivalent meaning?\n"
    "Use only \u201cYes\u201d or \u201cNo\u201d for your evaluation:"
)
#: How the stochastic answers are asked for (the paper re-runs its own RAG prompt; see docs/judges.md).
SAMPLE_PROMPT = "Answer the question using the context.\n\nContext:\n{context}\n\nQuestion: {question}"
PROMPT_VERSION = "grammar-table6-1"


class Statements(BaseModel):
    """The answer's atomic statements."""

    statements: list[str] = Field(description="One or more self-contained statements per sentence of the answer.")


class Inference(BaseModel):
    """A natural language inference verdict, explanation first."""

    explanation: str = Field(description="Why the context does or does not support the statement, before the verdict.")
    verdict: Literal["Yes", "No", "Null"] = Field(description="Yes (supported), No (contradicted), Null (neither).")


class Agreement(BaseModel):
    """Whether two answers agree, explanation first."""

    explanation: str = Field(description="How the two answers compare, before the verdict.")
    verdict: Literal["Yes", "No"] = Field(description="Yes if both address the query with equivalent meaning.")


class RagasFactOptions(JudgeOptions):
    """Options of ``ragas_fact``."""

    generator: GeneratorRef = Field(description="LLM generator acting as judge: a name or { name, options }.")
    prompt_version: Literal["grammar-table6-1"] = Field(
        PROMPT_VERSION, description="Version of the prompts (part of the judge's identity)."
    )
    max_context_chars: int = Field(16000, ge=100, description="Retrieved context text beyond this is cut.")


class RagasFact(LLMJudging, Metric):
    """RAGAS-Fact (GRAMMAR seeds/000 section 4.1, Table 1; prompts Table 6 and Es et al. 2023 section 3): share of
    the answer's atomic statements that the retrieved contexts support (NLI verdict "Yes")."""

    name = "ragas_fact"
    requires = frozenset({"question", "answer", "contexts"})
    Options = RagasFactOptions
    formula = "|{s in statements(answer) : NLI(contexts, s) = Yes}| / |statements(answer)|"
    source = (
        "GRAMMAR (seeds/000) section 4.1 and Table 1 (RAGAS-Fact), NLI prompt Table 6 'Ragas'; statement "
        "extraction prompt of RAGAS (Es et al. 2023, section 3)"
    )
    direction = "higher"
    value_range = (0.0, 1.0)

    def prompt_text(self) -> str:
        return f"max_context_chars={self.options.max_context_chars}\n{STATEMENT_PROMPT}\n{RAGAS_NLI_PROMPT}"

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One statement extraction, then one NLI ask per statement: at least 2 calls per sample with contexts
        (one statement), no fixed upper end (statements per answer; a pilot measures them)."""
        contexts = context_texts(sample, hints)
        if not contexts:
            return None if contexts is None else asks(self.judge_model(), [])
        extract = fill(STATEMENT_PROMPT, {"question": sample.question, "answer": answer_text(hints)})
        context = "\n\n".join(contexts)[: self.options.max_context_chars]
        nli = fill(RAGAS_NLI_PROMPT, {"context": context, "statement": answer_text(hints)})
        pattern = asks(self.judge_model(), [extract], Statements)
        nli_pattern = asks(self.judge_model(), [nli], Inference)
        pattern.calls_low += nli_pattern.calls_low
        pattern.prompt_chars += nli_pattern.prompt_chars
        return unbounded(pattern, "1 extraction + 1 NLI call per statement (statements per answer vary)")

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        contexts = [c for c in output.contexts if c.strip()]
        if not contexts:
            return Unscored(reason="no retrieved contexts to check the statements against")
        asked = fill(STATEMENT_PROMPT, {"question": sample.question, "answer": output.answer})
        extracted = await self.ask(_user(asked), Statements)
        if extracted.parsed is None:
            return self.unusable(extracted, "statement extraction reply")
        statements = [s.strip() for s in extracted.parsed.statements if s.strip()]
        if not statements:
            return Unscored(reason="the answer yields no statements", details=_raw(extracted))
        context = "\n\n".join(contexts)[: self.options.max_context_chars]
        prompts = [fill(RAGAS_NLI_PROMPT, {"context": context, "statement": s}) for s in statements]
        replies = await asyncio.gather(*(self.ask(_user(p), Inference) for p in prompts))
        return _fact_share(statements, replies, self.identity)

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        raise NotImplementedError("an LLM metric is asynchronous: use ascore")


def _fact_share(statements: list[str], replies: list, judge: str) -> MetricResult | Unscored:
    """The share of statements judged "Yes"; unscored when any verdict is missing (a share would be a guess)."""
    rows = [
        {
            "statement": s,
            "verdict": r.parsed.verdict.lower() if r.parsed else None,
            "explanation": r.parsed.explanation if r.parsed else "",
            **({} if r.parsed else {"raw": r.raw, "error": r.error}),
        }
        for s, r in zip(statements, replies)
    ]
    details = {"statements": rows, "prompt_version": PROMPT_VERSION, "judge": judge}
    missing = [i for i, row in enumerate(rows) if row["verdict"] is None]
    if missing:
        return Unscored(
            reason=f"NLI reply not usable for statement {missing[0] + 1} of {len(rows)}: {rows[missing[0]]['error']}",
            details=details,
        )
    supported = sum(row["verdict"] == "yes" for row in rows)
    details.update(supported=supported, total=len(rows))
    return MetricResult(value=supported / len(rows), details=details)


class SelfCheckOptions(JudgeOptions):
    """Options of ``selfcheck_qa``."""

    generator: GeneratorRef = Field(
        description="Generator that samples the stochastic answers; use the system's own generator, as the paper does."
    )
    evaluator: GeneratorRef | None = Field(
        None, description="Generator that compares the answers (Table 6 SelfCheck-QA); default: `generator`."
    )
    prompt_version: Literal["grammar-table6-1"] = Field(
        PROMPT_VERSION, description="Version of the prompts (part of the judge's identity)."
    )
    samples: int = Field(4, ge=1, le=20, description="Stochastic answers sampled (the paper: 4).")
    temperature: float = Field(1.0, gt=0, le=2, description="Sampling temperature of the stochastic answers.")
    sample_prompt: str = Field(
        SAMPLE_PROMPT, description="Prompt of the stochastic answers; fields {context} and {question}."
    )
    max_context_chars: int = Field(16000, ge=100, description="Retrieved context text beyond this is cut.")


class SelfCheckQA(LLMJudging, Judge):
    """SelfCheck-QA (GRAMMAR seeds/000 section 4.1, Appendix I, Table 6; after Manakul et al. 2023): correct only
    if every one of ``samples`` answers sampled at temperature 1.0 addresses the query with the same meaning as the
    system's (temperature-0) answer."""

    name = "selfcheck_qa"
    requires = frozenset({"question", "answer"})  # the contexts, when there are some, go to the samples
    Options = SelfCheckOptions
    _sampler = None

    def sampler(self):
        """The generator of the stochastic answers, built once from ``options.generator``."""
        if self._sampler is None:
            self._sampler = self.context.build(self.options.generator)
        return self._sampler

    def judge_model(self):
        """The comparing model: ``options.evaluator``, or the sampler itself (one client, one cache)."""
        if self._judge_model is None:
            evaluator = self.options.evaluator
            self._judge_model = self.context.build(evaluator) if evaluator is not None else self.sampler()
        return self._judge_model

    def prompt_text(self) -> str:
        o = self.options
        evaluator = o.evaluator.model_dump(mode="json") if o.evaluator is not None else None
        shaped = {"evaluator": evaluator, "samples": o.samples, "temperature": o.temperature}
        shaped.update(sample_prompt=o.sample_prompt, max_context_chars=o.max_context_chars)
        return f"{json.dumps(shaped, sort_keys=True)}\n{SELFCHECK_QA_PROMPT}"

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """``samples`` stochastic answers (sampler) and ``samples`` comparisons (evaluator, re-asked when invalid)."""
        contexts = context_texts(sample, hints) or []
        context = "\n\n".join(contexts)[: self.options.max_context_chars]
        sampled = self.options.sample_prompt.format(context=context, question=sample.question)
        values = {"query": sample.question, "answer": answer_text(hints), "stochastic_answer": answer_text(hints)}
        n = self.options.samples
        return [
            asks(self.sampler(), [sampled] * n),
            asks(self.judge_model(), [fill(SELFCHECK_QA_PROMPT, values)] * n, Agreement),
        ]

    async def judge(self, sample: Sample, output: RAGOutput) -> Judgement:
        indices = range(1, self.options.samples + 1)
        answers = await asyncio.gather(*(self._sample(sample, output, i) for i in indices))
        values = {"query": sample.question, "answer": output.answer}
        prompts = [fill(SELFCHECK_QA_PROMPT, {**values, "stochastic_answer": b}) for b in answers]
        replies = await asyncio.gather(*(self.ask(_user(p), Agreement) for p in prompts))
        return self._verdict(answers, replies)

    async def _sample(self, sample: Sample, output: RAGOutput, index: int) -> str:
        """Stochastic answer ``index`` (1..samples): a real, distinct call (its own cache entry)."""
        context = "\n\n".join(c for c in output.contexts if c.strip())[: self.options.max_context_chars]
        prompt = self.options.sample_prompt.format(context=context, question=sample.question)
        params = {"temperature": self.options.temperature, "sample_index": index}
        request = GenerationRequest(question=sample.question, messages=_user(prompt), params=params)
        return (await self.sampler().generate(request)).text

    def _verdict(self, answers: list[str], replies: list) -> Judgement:
        rows = [
            {
                "sample_index": i,
                "stochastic_answer": b,
                "agrees": (r.parsed.verdict == "Yes") if r.parsed else None,
                "explanation": r.parsed.explanation if r.parsed else "",
                **({} if r.parsed else {"raw": r.raw, "error": r.error}),
            }
            for i, (b, r) in enumerate(zip(answers, replies), start=1)
        ]
        details = {"samples": rows, "prompt_version": PROMPT_VERSION}
        judge_id = self.identity  # name:generator:prompt_version:digest (evaluator, samples, temperature, prompts)
        unusable = [row for row in rows if row["agrees"] is None]
        if unusable:
            reason = f"comparison with sample {unusable[0]['sample_index']} not usable: {unusable[0]['error']}"
            return Judgement(
                judge=self.name, verdict="unscored", score=None, explanation=reason, judge_id=judge_id, details=details
            )
        agreeing = sum(row["agrees"] for row in rows)
        correct = agreeing == len(rows)
        return Judgement(
            judge=self.name,
            verdict="correct" if correct else "incorrect",
            score=1.0 if correct else 0.0,
            explanation=f"{agreeing} of {len(rows)} stochastic answers agree with the answer",
            judge_id=judge_id,
            details=details,
        )


def _user(content: str) -> list[dict[str, str]]:
    """One user message."""
    return [{"role": "user", "content": content}]


def _raw(reply) -> dict[str, str]:
    """The raw reply (and its error, if any) for the details."""
    return {"raw": reply.raw, **({"error": reply.error} if reply.error else {})}


@hookimpl
def register_metrics(register):
    """Register ``ragas_fact``."""
    register(RagasFact)


@hookimpl
def register_judges(register):
    """Register ``selfcheck_qa``."""
    register(SelfCheckQA)
