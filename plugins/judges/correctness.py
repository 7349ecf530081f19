"""The ``correctness`` judge: GRAMMAR's reference-based LLM judge (seeds/000, Appendix I, Table 6 "Ours").

The judge model gets the query, the true answer and the given response, and says "Correct" or "Incorrect":

- ``reply = "structured"`` (the default for ``correctness``): the Table 6 prompt, answered as structured output
  with the explanation first and the judgement after (a whole word, validated; re-asked when missing);
- ``reply = "text"`` (the default for ``grammar_llm``, the paper's protocol as printed): the Table 6 prompt ends
  in ``##Judgement##:``, so the reply starts with the judgement; its first whole word "Correct" or "Incorrect"
  decides (so "Incorrect. The correct answer is ..." is incorrect, and "incorrectly" is neither).

A reply without a judgement after the bounded re-asks is an unscored judgement with the raw reply (never a guess).
``grammar_llm`` (plugins/grammar/judge.py) is this judge with ``reply = "text"`` by default.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from ragassay import Judge, Judgement, RAGOutput, Sample, hookimpl
from ragassay.llm import (
    TEXT_RETRIES,
    JudgeOptions,
    LLMJudging,
    answer_text,
    asks,
    fill,
    one_verdict,
    verdict_words,
)

#: GRAMMAR (seeds/000) Table 6, "Ours": the reference-based correctness judge, verbatim (ASCII quotes).
JUDGE_PROMPT = """\
Evaluate the accuracy of the given response in relation to the true answer for the specified query. After \
evaluating, provide a judgement as either "Correct" or "Incorrect" based on whether the ##Given Response## \
accurately matches the ##True Answer##.
##Query##: {query}
##True Answer##: {true_answer}
##Given Response##: {given_response}
##Judgement##:"""

PROMPT_VERSION = "grammar-table6-1"
VERDICTS = ("correct", "incorrect")


class CorrectnessOptions(JudgeOptions):
    """Options of the correctness judge."""

    prompt_version: Literal["grammar-table6-1"] = Field(
        PROMPT_VERSION, description="Version of the prompt protocol (part of the judge's identity)."
    )
    prompt: str = Field(JUDGE_PROMPT, description="Prompt with {query}, {true_answer} and {given_response}.")
    reply: Literal["structured", "text"] = Field(
        "structured",
        description="'structured': explanation, then judgement, as structured output; 'text': a free-text reply "
        "whose first whole word Correct/Incorrect decides.",
    )


class Judged(BaseModel):
    """The judge's structured reply: the explanation first, then the judgement."""

    explanation: str = Field(description="How the given response compares with the true answer, before the judgement.")
    judgement: str = Field(
        description='"Correct" if the given response accurately matches the true answer, else "Incorrect".'
    )

    @field_validator("judgement", mode="before")
    @classmethod
    def _correct_or_incorrect(cls, value: Any) -> str:
        return one_verdict(value, VERDICTS).capitalize()


def parse_verdict(reply: str) -> str | None:
    """'correct' or 'incorrect': the first of those words in ``reply`` as a whole word; None when neither occurs."""
    found = verdict_words(reply, VERDICTS)
    return found[0] if found else None


class CorrectnessJudge(LLMJudging, Judge):
    """Asks an LLM whether the answer matches the reference answer: Correct/Incorrect (GRAMMAR Table 6 "Ours")."""

    name = "correctness"
    requires = frozenset({"question", "reference_answers", "answer"})
    reference_based = True  # compares the answer with the reference answers (a truth for meta-eval)
    Options = CorrectnessOptions

    def prompt_text(self) -> str:
        return f"reply={self.options.reply}\n{self.options.prompt}"

    @property
    def judge_id(self) -> str:
        """The judge's identity: name, generator, prompt version and a digest of options and prompt."""
        return self.identity

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One call per sample with a reference answer (up to 1 + structured_retries with corrective re-asks,
        1 + TEXT_RETRIES for reply = "text")."""
        model = self.judge_model()
        if not sample.reference_answers:
            return asks(model, [])
        values = {"query": sample.question, "given_response": answer_text(hints)}
        prompt = fill(self.options.prompt, {**values, "true_answer": " | ".join(sample.reference_answers)})
        if self.options.reply == "text":
            return asks(model, [prompt], retries=TEXT_RETRIES)
        return asks(model, [prompt], Judged)

    async def judge(self, sample: Sample, output: RAGOutput) -> Judgement:
        if not sample.reference_answers:
            return self._verdict("unscored", "the sample has no reference answer")
        values = {
            "query": sample.question,
            "given_response": output.answer,
            "true_answer": " | ".join(sample.reference_answers),
        }
        messages = [{"role": "user", "content": fill(self.options.prompt, values)}]
        if self.options.reply == "text":
            reply = await self.ask_text(messages, VERDICTS)
            verdict, explanation = reply.parsed, reply.raw.strip()[:500]
        else:
            reply = await self.ask(messages, Judged)
            verdict = reply.parsed.judgement.lower() if reply.parsed is not None else None
            explanation = reply.parsed.explanation if reply.parsed is not None else ""
        if verdict is None:
            reason = f"unparseable judge reply: {reply.raw.strip()[:200]!r} ({reply.error})"
            return self._verdict("unscored", reason, raw=reply.raw, error=reply.error)
        return self._verdict(verdict, explanation, raw=reply.raw)

    def _verdict(self, verdict: str, explanation: str, **details: Any) -> Judgement:
        score = {"correct": 1.0, "incorrect": 0.0}.get(verdict)
        return Judgement(
            judge=self.name,
            verdict=verdict,
            score=score,
            explanation=explanation,
            judge_id=self.judge_id,
            details={"prompt_version": self.options.prompt_version, "reply": self.options.reply, **details},
        )


@hookimpl
def register_judges(register):
    """Register the correctness judge."""
    register(CorrectnessJudge)
