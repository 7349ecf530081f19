"""The ``umbrela`` relevance judge: UMBRELA's graded 0-3 relevance prompt (Upadhyay, Pradeep, Thakur, Craswell,
Lin, "UMBRELA: UMbrela is the (Open-Source Reproduction of the) Bing RELevance Assessor", arXiv:2406.06519, 2024;
the prompt of Thomas et al., "Large language models can accurately predict searcher preferences", SIGIR 2024).

The prompt is UMBRELA's zero-shot Bing prompt as its authors publish it (castorini/umbrela,
``src/umbrela/prompts/qrel_zeroshot_bing.txt``), with ``{query}`` and ``{passage}`` filled in; the judge model
answers ``##final score: N``. Grades:

==== =======================================================================================
0    the passage has nothing to do with the query
1    the passage seems related to the query but does not answer it
2    the passage has some answer for the query, but unclear or hidden amongst extraneous information
3    the passage is dedicated to the query and contains the exact answer
==== =======================================================================================

The grade is read from the reply (``final score: N``, UMBRELA's ``"o": N`` or a reply that is a lone digit);
a reply without one is re-asked with a corrective message at most ``TEXT_RETRIES`` times, then the passage is
unscored with the raw reply (UMBRELA's own parser scores such a reply 0; ragassay never guesses).

A judgement of an output grades each retrieved passage against the sample's question (one call per passage):
``details["grades"]`` lists them in retrieval order, ``details["grade"]`` is the grade of a one-passage output,
the score is the mean grade / 3. ``ragassay qrels judge`` uses it on one pooled passage at a time to make qrels
(docs/retrieval.md, "Without gold labels").
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, Literal

from pydantic import Field

from ragassay import GenerationRequest, Judge, Judgement, ProviderError, RAGOutput, Sample, hookimpl
from ragassay.llm import TEXT_RETRIES, JudgeOptions, LLMJudging, asks, context_texts, fill

#: UMBRELA's zero-shot Bing prompt (castorini/umbrela, src/umbrela/prompts/qrel_zeroshot_bing.txt), verbatim
#: (trailing spaces of lines 2-4 kept).
UMBRELA_PROMPT = """\
Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following meanings:
0 = represent that the passage has nothing to do with the query, \n\
1 = represents that the passage seems related to the query but does not answer it, \n\
2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden \
amongst extraneous information and \n\
3 = represents that the passage is dedicated to the query and contains the exact answer.

Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, \
category 2 if passage presents something very important related to the entire topic but also has some extra \
information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies \
give it category 0.

Query: {query}
Passage: {passage}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score \
must be an integer value only.
Do not provide any code in result. Provide each score in the format of: ##final score: score without providing \
any reasoning."""

PROMPT_VERSION = "umbrela-zeroshot-bing-1"
GRADES = (0, 1, 2, 3)
#: Where a reply states its grade, most specific first: the asked-for "final score: N", UMBRELA's JSON key "o",
#: then a reply that is the digit alone.
GRADE_PATTERNS = (
    re.compile(r"final[ _]score\W{0,4}([0-3])\b", re.I),
    re.compile(r"""["']?\bo["']?\s*:\s*([0-3])\b""", re.I),
    re.compile(r"\A\W*([0-3])\W*\Z"),
)
CORRECTION = "Your reply gives no final score. Answer only with: ##final score: N (N is 0, 1, 2 or 3)."


class UmbrelaOptions(JudgeOptions):
    """Options of the umbrela relevance judge."""

    prompt_version: Literal["umbrela-zeroshot-bing-1"] = Field(
        PROMPT_VERSION, description="Version of the prompt protocol (part of the judge's identity)."
    )
    prompt: str = Field(UMBRELA_PROMPT, description="Prompt with {query} and {passage} (default: UMBRELA's).")
    max_passage_chars: int = Field(
        8000, ge=100, description="A passage longer than this is cut to it before it is judged."
    )


def parse_grade(reply: str) -> int | None:
    """The grade 0-3 a reply states (:data:`GRADE_PATTERNS`), or None."""
    for pattern in GRADE_PATTERNS:
        found = pattern.search(reply.strip())
        if found:
            return int(found.group(1))
    return None


class UmbrelaJudge(LLMJudging, Judge):
    """Grades each retrieved passage 0-3 for the question with UMBRELA's prompt (arXiv:2406.06519)."""

    name = "umbrela"
    requires = frozenset({"question", "contexts"})
    uses_answer = False  # the question and the retrieved passages only
    Options = UmbrelaOptions

    def prompt_text(self) -> str:
        return f"max_passage_chars={self.options.max_passage_chars}\n{self.options.prompt}"

    def prompt(self, query: str, passage: str) -> str:
        """The filled prompt for one (query, passage) pair."""
        return fill(self.options.prompt, {"query": query, "passage": passage[: self.options.max_passage_chars]})

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One call per retrieved passage (up to 1 + TEXT_RETRIES with corrective re-asks)."""
        passages = context_texts(sample, hints) or []
        return asks(self.judge_model(), [self.prompt(sample.question, p) for p in passages], retries=TEXT_RETRIES)

    async def grade(self, query: str, passage: str) -> tuple[int | None, dict[str, Any]]:
        """The grade of ``passage`` for ``query`` and what the judge said (``raw``, ``error`` when no grade)."""
        asked = [{"role": "user", "content": self.prompt(query, passage)}]
        raw = ""
        for _ in range(TEXT_RETRIES + 1):
            try:
                generation = await self.judge_model().generate(
                    GenerationRequest(question=asked[-1]["content"], messages=asked, params=dict(self.options.params))
                )
            except ProviderError as exc:
                return None, {"raw": raw, "error": f"the judge model failed: {exc}"}
            raw = generation.text or ""
            grade = parse_grade(raw)
            if grade is not None:
                return grade, {"raw": raw}
            asked = [*asked, {"role": "assistant", "content": raw}, {"role": "user", "content": CORRECTION}]
        return None, {"raw": raw, "error": f"no final score 0-3 in the reply after {TEXT_RETRIES + 1} replies"}

    async def judge(self, sample: Sample, output: RAGOutput) -> Judgement:
        if not output.contexts:
            return self._judgement(None, "the output retrieved no passage", {})
        found = await asyncio.gather(*(self.grade(sample.question, passage) for passage in output.contexts))
        grades = [grade for grade, _ in found]
        details: dict[str, Any] = {"grades": grades, "replies": [said for _, said in found]}
        if len(grades) == 1:
            details["grade"] = grades[0]
        failed = [i for i, grade in enumerate(grades) if grade is None]
        if failed:
            reason = f"passage {failed[0] + 1} of {len(grades)}: {found[failed[0]][1]['error']}"
            return self._judgement(None, reason, details)
        return self._judgement(sum(grades) / (3 * len(grades)), f"grades {grades}", details)

    def _judgement(self, score: float | None, explanation: str, details: dict[str, Any]) -> Judgement:
        verdict = "unscored" if score is None else "graded"
        details = {"prompt_version": self.options.prompt_version, **details}
        return Judgement(
            judge=self.name, verdict=verdict, score=score, explanation=explanation, judge_id=self.identity,
            details=details,
        )  # fmt: skip


@hookimpl
def register_judges(register):
    """Register the umbrela relevance judge."""
    register(UmbrelaJudge)
