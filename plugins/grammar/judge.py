"""The ``grammar_llm`` judge: the paper's reference-based LLM judge (GRAMMAR Table 6, "Ours").

The configured generator is asked whether the response matches the true answer for the query and must say
"Correct" or "Incorrect". The first of those words in its reply decides (so "Incorrect" is never read as
"Correct"); a reply with neither is unscored, with the reply quoted as the reason.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import GenerationRequest, GeneratorRef, Judge, Judgement, RAGOutput, Sample

from .prompts import JUDGE_PROMPT, fill

_VERDICT = re.compile(r"\b(incorrect|correct)\b", re.IGNORECASE)


class GrammarJudgeOptions(BaseModel):
    """Options of the grammar_llm judge."""

    model_config = ConfigDict(extra="forbid")

    generator: GeneratorRef = Field(description="Generator that judges: a name, or { name, options }.")
    prompt: str = Field(JUDGE_PROMPT, description="Prompt with {query}, {true_answer} and {given_response}.")
    params: dict[str, Any] = Field(
        default_factory=lambda: {"temperature": 0.0}, description="Decoding parameters given to the generator."
    )


def parse_verdict(reply: str) -> str | None:
    """'correct', 'incorrect', or None when the reply says neither."""
    match = _VERDICT.search(reply.replace("*", " ").replace("#", " "))
    return match.group(1).lower() if match else None


class GrammarLLMJudge(Judge):
    """Asks an LLM whether the answer matches the reference answer (GRAMMAR Table 6 "Ours" prompt)."""

    name = "grammar_llm"
    Options = GrammarJudgeOptions
    _generator = None

    @property
    def judge_id(self) -> str:
        digest = hashlib.sha256(self.options.prompt.encode()).hexdigest()[:8]
        return f"grammar_llm:{self.options.generator.name}:{digest}"

    async def judge(self, sample: Sample, output: RAGOutput) -> Judgement:
        if not sample.reference_answers:
            return self._verdict("unscored", None, "the sample has no reference answer")
        if self._generator is None:
            self._generator = self.context.build(self.options.generator)
        prompt = fill(
            self.options.prompt,
            {
                "query": sample.question,
                "given_response": output.answer,
                "true_answer": " | ".join(sample.reference_answers),
            },
        )
        request = GenerationRequest(
            question=prompt, messages=[{"role": "user", "content": prompt}], params=self.options.params
        )
        reply = (await self._generator.generate(request)).text
        verdict = parse_verdict(reply)
        if verdict is None:
            return self._verdict("unscored", None, f"unparseable judge reply: {reply.strip()[:200]!r}")
        return self._verdict(verdict, 1.0 if verdict == "correct" else 0.0, reply.strip()[:500])

    def _verdict(self, verdict: str, score: float | None, explanation: str) -> Judgement:
        return Judgement(judge=self.name, verdict=verdict, score=score, explanation=explanation, judge_id=self.judge_id)
