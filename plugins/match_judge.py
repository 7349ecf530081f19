"""The ``match`` judge: correct when the answer matches a reference answer after SQuAD normalisation.

It uses exactly the definitions of the ``exact_match`` and ``contains_answer`` metrics (the helpers of
:mod:`ragassay.plugins.lexical_metrics`), and adds a verdict and an explanation naming the reference found.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Judge, Judgement, RAGOutput, Sample, Unscored, hookimpl
from ragassay.plugins.lexical_metrics import find_contained, find_exact_match, usable_references


class MatchOptions(BaseModel):
    """Options of the ``match`` judge."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["exact", "contains"] = Field(
        "contains",
        description="'exact': normalised answer equals a reference (SQuAD EM); "
        "'contains': a reference's tokens appear contiguously in the answer's tokens.",
    )


class MatchJudge(Judge):
    """Judges an answer correct when it matches a reference answer after SQuAD normalisation.

    Verdict 'correct' (score 1.0) when, in mode 'exact', normalize(answer) == normalize(r) for some
    reference r (SQuAD v1.1 ``exact_match_score``), or, in mode 'contains', tokens(r) is a contiguous
    sub-sequence of tokens(answer) (DPR ``has_answer``, Karpukhin et al. 2020); 'incorrect' (0.0)
    otherwise; 'unscored' (score None) when the sample has no reference answer left after normalisation.
    """

    name = "match"
    requires = frozenset({"reference_answers", "answer"})
    reference_based = True
    Options = MatchOptions

    async def judge(self, sample: Sample, output: RAGOutput) -> Judgement:
        mode = self.options.mode
        judge_id = f"match:{mode}"
        refs = usable_references(sample)
        if isinstance(refs, Unscored):
            return Judgement(
                judge=self.name, verdict="unscored", score=None, explanation=refs.reason, judge_id=judge_id
            )
        if mode == "exact":
            found, relation = find_exact_match(output.answer, refs), "equals"
        else:
            found, relation = find_contained(output.answer, refs), "contains"
        if found is None:
            return Judgement(
                judge=self.name,
                verdict="incorrect",
                score=0.0,
                explanation=f"no reference found in answer (mode {mode})",
                judge_id=judge_id,
            )
        return Judgement(
            judge=self.name,
            verdict="correct",
            score=1.0,
            explanation=f"answer {relation} reference {found!r}",
            judge_id=judge_id,
        )


@hookimpl
def register_judges(register):
    register(MatchJudge)
