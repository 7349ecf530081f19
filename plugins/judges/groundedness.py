"""``citation_groundedness``: the groundedness blog's citation-segment metric (seeds/001, "Improved Solution").

1. the answer is split into paragraphs, headers dropped; 2. paragraphs are split into segments at citation
markers (:mod:`.segmentation`, no model); 3. each cited segment is fact-checked against the contexts it cites,
and only those (``RAGOutput.contexts``, ``[1]`` = the first by default, as the naive RAG numbers its sources);
a citation of a source the output does not have makes the segment false without a model call; 4. each uncited
segment is fact-checked against the segments judged true in step 3 (none true: false, no call); 5. the score
is the share of segments judged true.

The fact-checker is the blog's (:class:`.fact_check.LLMFactChecker`: its system prompt verbatim, explanation
first, then ``correct``) over any configured generator, or, with no generator, the offline
:class:`.fact_check.LexicalFactChecker`. Step 3's checks run concurrently, then step 4's. An answer without
segments is unscored; a segment on which the checker gave no verdict (an unusable reply after the bounded
re-asks) makes the value unscored with the raw reply in its details: never guessed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragassay import GeneratorRef, Metric, MetricResult, RAGOutput, Sample, Unscored, hookimpl
from ragassay.llm import context_texts
from ragassay.plugins.judges import fact_check
from ragassay.plugins.judges.segmentation import DEFAULT_CITATION_PATTERN, Segment, segment_answer


class GroundednessOptions(BaseModel):
    """Options of ``citation_groundedness``."""

    model_config = ConfigDict(extra="forbid")

    generator: GeneratorRef | None = Field(
        None,
        description="Generator acting as the fact-checker (the blog used gpt-4o at temperature 0); "
        "none: the offline lexical fact-checker.",
    )
    lexical_threshold: float = Field(
        fact_check.DEFAULT_LEXICAL_THRESHOLD,
        ge=0.0,
        le=1.0,
        description="Offline checker only: share of a segment's content words that must occur in its facts.",
    )
    citation_pattern: str = Field(
        DEFAULT_CITATION_PATTERN,
        description="Regular expression matching one citation marker; source numbers are the integers in the "
        "match, a-b expanded (default: [n], [n, m], [n-m]; adjacent markers [n][m] form one citation).",
    )
    numbering_base: Literal[0, 1] = Field(
        1, description="The number that cites the first context: 1 ([1] = first, as the naive RAG prompts) or 0."
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Fact-checker sampling temperature (blog: 0).")
    max_tokens: int | None = Field(None, ge=1, description="Most tokens per fact-check reply (generator default).")
    seed: int | None = Field(None, description="Fact-checker sampling seed, where the backend supports one.")
    prompt_version: Literal[fact_check.PROMPT_VERSION] = Field(
        fact_check.PROMPT_VERSION,
        description="Version of the fact-checker prompt (fixed; part of the metric's stored identity).",
    )

    @field_validator("citation_pattern")
    @classmethod
    def _valid_pattern(cls, value: str) -> str:
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise ValueError(f"citation_pattern {value!r} is not a valid regular expression: {exc}") from None
        if compiled.search("") is not None:
            raise ValueError(f"citation_pattern {value!r} matches the empty string; it must match a marker")
        return value


class CitationGroundedness(Metric):
    """Share of answer segments backed by the sources they cite (uncited ones: by the true cited segments);
    the groundedness blog's algorithm (seeds/001, "Improved Solution", steps 1-5)."""

    name = "citation_groundedness"
    requires = frozenset({"answer", "contexts"})
    Options = GroundednessOptions
    direction = "higher"
    value_range = (0.0, 1.0)
    formula = (
        "true segments / all segments; a cited segment is checked against the contexts it cites, an uncited "
        "one against the cited segments judged true"
    )
    source = (
        "Automating Groundedness Evaluation in RAG Applications (blog, seeds/001): 'Improved Solution' steps 1-5; "
        "fact-checker system prompt from 'The Details'"
    )

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One fact-check per segment of the answer (cited ones, then uncited ones against the true cited
        ones): at least 1 call per answer, no fixed upper end (segments per answer; a pilot measures them)."""
        from ragassay.llm import answer_text, asks, unbounded

        if self.options.generator is None:
            return None
        contexts = "\n\n".join(context_texts(sample, hints) or [])
        check = fact_check.LLMFactChecker(self.context.build(self.options.generator))
        content = len(answer_text(hints)) + len(contexts) + 40  # the JSON {"text": ..., "fact": ...}
        pattern = asks(check.generator, [check.prompt], fact_check.FactCheck, extra_chars=content)
        return unbounded(pattern, "1 fact-check call per answer segment (segments per answer vary)")

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        segments = segment_answer(output.answer, self.options.citation_pattern)
        if not segments:
            return Unscored(reason="the answer has no segments to fact-check (empty, or only headers)")
        rows = [_row(s) for s in segments]
        checker = self._checker()
        cited = [i for i, s in enumerate(segments) if s.citations]
        jobs = {i: self._cited_check(checker, segments[i], output.contexts, rows[i]) for i in cited}
        if (failed := await _settle(jobs, rows, round_=1)) is not None:
            return failed
        true_texts = [segments[i].text for i in cited if rows[i]["correct"]]
        uncited = [i for i, s in enumerate(segments) if not s.citations]
        for i in uncited:
            if not true_texts:
                rows[i].update(correct=False, explanation="no cited segment was judged true, so nothing backs it")
        jobs = {i: checker.check(segments[i].text, true_texts) for i in uncited if true_texts}
        if (failed := await _settle(jobs, rows, round_=2)) is not None:
            return failed
        true_count = sum(1 for row in rows if row["correct"])
        return MetricResult(value=true_count / len(rows), details=self._details(rows, true_count))

    def _cited_check(
        self, checker: Any, segment: Segment, contexts: Sequence[str], row: dict[str, Any]
    ) -> Awaitable[fact_check.CheckResult] | None:
        """The check of one cited segment, or None when it cites a missing source (``row`` is then final)."""
        base = self.options.numbering_base
        missing = [n for n in segment.citations if not 0 <= n - base < len(contexts)]
        if missing:
            have = f"sources {base}-{base + len(contexts) - 1}" if contexts else "no sources"
            verb = "does" if len(missing) == 1 else "do"
            row.update(
                correct=False, explanation=f"cites {_numbers(missing)}, which {verb} not exist (the output has {have})"
            )
            return None
        return checker.check(segment.text, [contexts[n - base] for n in segment.citations])

    def _checker(self) -> Any:
        checker = getattr(self, "_fact_checker", None)
        if checker is None:
            o = self.options
            if o.generator is None:
                checker = fact_check.LexicalFactChecker(o.lexical_threshold)
            else:
                params = {"temperature": o.temperature, "max_tokens": o.max_tokens, "seed": o.seed}
                params = {k: v for k, v in params.items() if v is not None}
                checker = fact_check.LLMFactChecker(self.context.build(o.generator), params=params)
            self._fact_checker = checker
        return checker

    def _details(self, rows: list[dict[str, Any]], true_count: int) -> dict[str, Any]:
        checker = "lexical" if self.options.generator is None else f"llm ({self.options.generator.name})"
        return {"checker": checker, "true_segments": true_count, "total_segments": len(rows), "segments": rows}


def _row(segment: Segment) -> dict[str, Any]:
    return {
        "text": segment.text,
        "cites": list(segment.citations),
        "round": 1 if segment.citations else 2,
        "correct": None,
        "explanation": "",
    }


async def _settle(jobs: dict[int, Awaitable | None], rows: list[dict[str, Any]], round_: int) -> Unscored | None:
    """Run one round's checks concurrently and record them in ``rows``; Unscored when one gave no verdict.

    Every check finishes before an error is raised (no call is left running)."""
    pending = {i: job for i, job in jobs.items() if job is not None}
    outcomes = await asyncio.gather(*pending.values(), return_exceptions=True)
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    if errors:
        raise errors[0]
    for i, result in zip(pending, outcomes):
        rows[i].update(correct=result.correct, explanation=result.explanation)
        if result.correct is None:
            rows[i].update(raw=result.raw, error=result.error)
    silent = [i for i in pending if rows[i]["correct"] is None]
    if not silent:
        return None
    first = rows[silent[0]]
    return Unscored(
        reason=f"the fact-checker gave no verdict on segment {silent[0] + 1} (round {round_}): {first['error']}",
        details={"raw": first["raw"], "segments": rows},
    )


def _numbers(numbers: list[int]) -> str:
    return ("source " if len(numbers) == 1 else "sources ") + ", ".join(map(str, numbers))


@hookimpl
def register_metrics(register):
    register(CitationGroundedness)
