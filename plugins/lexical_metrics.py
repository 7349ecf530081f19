"""Lexical answer metrics: token recall, token F1, K-precision, exact match and contains-answer.

Every metric tokenises with :func:`ragassay.text.answer_tokens`, the SQuAD v1.1 normalisation that Unitxt's
``TokenOverlap`` uses (lower case, punctuation removed, articles 'a'/'an'/'the' removed, whitespace
collapsed, then split on whitespace). Token overlap is a multiset intersection: a token repeated twice in
the answer counts twice only if it also appears twice on the other side.

Shared rule for reference answers: references that normalise to no tokens (``""``, ``"The."``) are ignored;
a sample left without a usable reference is unscored. The helpers :func:`usable_references`,
:func:`find_exact_match` and :func:`find_contained` are reused by the ``match`` judge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, RAGOutput, Sample, Unscored, answer_tokens, hookimpl, normalize_answer

# -- helpers (also used by plugins/match_judge.py) ----------------------------------------------


def usable_references(sample: Sample) -> list[str] | Unscored:
    """The sample's reference answers that keep at least one token after normalisation, or the reason."""
    if not sample.reference_answers:
        return Unscored(reason="sample has no reference_answers")
    usable = [ref for ref in sample.reference_answers if answer_tokens(ref)]
    if not usable:
        return Unscored(reason="every reference answer is empty after normalisation")
    return usable


def common_count(tokens: Sequence[str], other: Sequence[str]) -> int:
    """Size of the multiset intersection of two token lists."""
    return sum((Counter(tokens) & Counter(other)).values())


def overlap(prediction: Sequence[str], reference: Sequence[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of prediction tokens against reference tokens; all 0 without overlap."""
    same = common_count(prediction, reference)
    if same == 0:
        return 0.0, 0.0, 0.0
    precision, recall = same / len(prediction), same / len(reference)
    return precision, recall, 2 * precision * recall / (precision + recall)


def contains_tokens(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Whether ``needle`` occurs as a contiguous run of whole tokens in ``haystack`` (empty never does)."""
    n = len(needle)
    if n == 0:
        return False
    return any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


def find_exact_match(answer: str, references: Sequence[str]) -> str | None:
    """The first reference equal to ``answer`` after SQuAD normalisation, or None."""
    normalized = normalize_answer(answer)
    return next((ref for ref in references if normalize_answer(ref) == normalized), None)


def find_contained(answer: str, references: Sequence[str]) -> str | None:
    """The first reference whose tokens occur contiguously in the answer's tokens, or None."""
    tokens = answer_tokens(answer)
    return next((ref for ref in references if contains_tokens(tokens, answer_tokens(ref))), None)


# -- metrics -------------------------------------------------------------------------------------


class TokenRecall(Metric):
    """Answer correctness (Unitxt): share of reference-answer tokens found in the answer.

    Formula: max over references r of |tokens(answer) ∩ tokens(r)| / |tokens(r)|, multiset intersection.
    Source: Unitxt RAG support, 'Answer Correctness' (seeds/004), Unitxt ``TokenOverlap`` recall;
    Adlakha et al. 2023, 'Evaluating Correctness and Faithfulness of Instruction-Following Models for
    Question Answering', token-level Recall. Unscored without a usable reference.
    """

    name = "token_recall"
    direction = "higher"
    value_range = (0.0, 1.0)
    formula = "max_r |tokens(answer) ∩ tokens(r)| / |tokens(r)|  (multiset intersection)"
    source = "Unitxt RAG support, 'Answer Correctness' (seeds/004); Adlakha et al. 2023, token-level Recall"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        refs = usable_references(sample)
        if isinstance(refs, Unscored):
            return refs
        tokens = answer_tokens(output.answer)
        return max(overlap(tokens, answer_tokens(ref))[1] for ref in refs)


class TokenF1(Metric):
    """SQuAD F1: harmonic mean of token precision and recall, best over the reference answers.

    Formula: max over r of 2·P·R / (P + R) with P = |a ∩ r| / |a|, R = |a ∩ r| / |r| (multiset tokens),
    0 when a ∩ r is empty. Source: SQuAD v1.1 official evaluation script (Rajpurkar et al. 2016,
    ``f1_score``); Unitxt ``TokenOverlap`` f1. Unscored without a usable reference.
    """

    name = "token_f1"
    direction = "higher"
    value_range = (0.0, 1.0)
    formula = "max_r 2·P·R/(P+R),  P = |a ∩ r|/|a|,  R = |a ∩ r|/|r|  (multiset tokens; 0 if no overlap)"
    source = "SQuAD v1.1 evaluation script, f1_score (Rajpurkar et al. 2016); Unitxt TokenOverlap f1"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        refs = usable_references(sample)
        if isinstance(refs, Unscored):
            return refs
        tokens = answer_tokens(output.answer)
        return max(overlap(tokens, answer_tokens(ref))[2] for ref in refs)


class KPrecisionOptions(BaseModel):
    """Options of ``k_precision``: how the retrieved contexts are pooled (see :class:`KPrecision`)."""

    model_config = ConfigDict(extra="forbid")

    pool: Literal["joined", "each"] = Field(
        "joined",
        description="'joined': precision against all retrieved contexts together (default); "
        "'each': best precision against any single context (what Unitxt's catalog metric computes).",
    )


class KPrecision(Metric):
    """Faithfulness (Unitxt K-Precision): share of answer tokens that occur in the retrieved contexts.

    Formula: |tokens(answer) ∩ tokens(c_1 ⊕ … ⊕ c_n)| / |tokens(answer)|, multiset intersection over the
    concatenated contexts (option ``pool="each"``: max over single contexts, as Unitxt's
    ``metrics.rag.faithfulness`` does). Source: Unitxt RAG support, 'Faithfulness' (seeds/004); Adlakha et
    al. 2023, K-Precision. Unscored when the output has no contexts or the answer is
    empty after normalisation.
    """

    name = "k_precision"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = KPrecisionOptions
    formula = "|tokens(answer) ∩ tokens(contexts joined)| / |tokens(answer)|  (multiset intersection)"
    source = "Unitxt RAG support, 'Faithfulness' (seeds/004); Adlakha et al. 2023, K-Precision"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        if not output.contexts:
            return Unscored(reason="no retrieved contexts to be faithful to")
        tokens = answer_tokens(output.answer)
        if not tokens:
            return Unscored(reason="answer is empty after normalisation")
        if self.options.pool == "each":
            return max(common_count(tokens, answer_tokens(c)) for c in output.contexts) / len(tokens)
        context_tokens = [tok for context in output.contexts for tok in answer_tokens(context)]
        return common_count(tokens, context_tokens) / len(tokens)


class ExactMatch(Metric):
    """SQuAD exact match: 1 if the normalised answer equals some normalised reference answer, else 0.

    Formula: max over r of [normalize(answer) == normalize(r)]. Source: SQuAD v1.1 official evaluation
    script (Rajpurkar et al. 2016, ``exact_match_score``). Unscored without a usable reference.
    """

    name = "exact_match"
    direction = "higher"
    value_range = (0.0, 1.0)
    formula = "max_r 1[normalize(answer) == normalize(r)]"
    source = "SQuAD v1.1 evaluation script, exact_match_score (Rajpurkar et al. 2016)"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        refs = usable_references(sample)
        if isinstance(refs, Unscored):
            return refs
        return 1.0 if find_exact_match(output.answer, refs) is not None else 0.0


class ContainsAnswer(Metric):
    """Contains-answer: 1 if some reference's tokens appear contiguously in the answer's tokens, else 0.

    Formula: max over r of [tokens(r) is a contiguous sub-sequence of tokens(answer)], on whole tokens,
    so '10' does not match inside '100'. Source: the answer-containment check of open-domain QA, DPR's
    ``has_answer`` (Karpukhin et al. 2020, token-sequence match), here on SQuAD-normalised tokens.
    Unscored without a usable reference.
    """

    name = "contains_answer"
    direction = "higher"
    value_range = (0.0, 1.0)
    formula = "max_r 1[tokens(r) is a contiguous sub-sequence of tokens(answer)]"
    source = "DPR has_answer token-sequence match (Karpukhin et al. 2020), on SQuAD-normalised tokens"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        refs = usable_references(sample)
        if isinstance(refs, Unscored):
            return refs
        return 1.0 if find_contained(output.answer, refs) is not None else 0.0


@hookimpl
def register_metrics(register):
    for metric in (TokenRecall, TokenF1, KPrecision, ExactMatch, ContainsAnswer):
        register(metric)
