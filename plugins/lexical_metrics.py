"""Lexical metrics: token recall, token F1, K-precision, exact match, contains-answer, and Unitxt's lexical
answer and context relevance.

Every metric tokenises with :func:`ragassay.text.answer_tokens`, the SQuAD v1.1 normalisation that Unitxt's
``TokenOverlap`` uses (lower case, punctuation removed, articles 'a'/'an'/'the' removed, whitespace
collapsed, then split on whitespace). Token overlap is a multiset intersection (:mod:`ragassay.lexical`): a
token repeated twice in the answer counts twice only if it also appears twice on the other side.

Two modes (option ``compat``; ``[evaluation] compat = "unitxt"`` sets it for every metric that has it):

* ``"ragassay"`` (default): a value that cannot mean anything is **unscored** with a reason: a sample with no
  usable reference answer, an output with no contexts, an answer or question with no tokens. Averages then
  leave it out instead of counting a silent 0.
* ``"unitxt"``: Unitxt 1.26's value: such instances score 0 (an empty reference list, no contexts), every
  reference counts (one that normalises to nothing scores 0 against the answer), K-precision is the best single
  context (Unitxt's ``metrics.rag.*.faithfulness``). Use it to reproduce a Unitxt evaluation number for number.

The helpers :func:`usable_references`, :func:`find_exact_match` and :func:`find_contained` are reused by the
``match`` judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragassay import (
    Metric,
    RAGOutput,
    Sample,
    Unscored,
    answer_tokens,
    best_overlap,
    hookimpl,
    normalize_answer,
    token_bag,
)

Compat = Literal["ragassay", "unitxt"]
COMPAT_DESCRIPTION = (
    "'ragassay': an instance without what the metric needs (a reference, a context, tokens) is unscored with the "
    "reason; 'unitxt': it scores 0, as Unitxt 1.26 does (see docs/metrics.md#unitxt-compatibility)."
)


class LexicalOptions(BaseModel):
    """Options of the reference-based lexical metrics and the lexical relevance metrics."""

    model_config = ConfigDict(extra="forbid")

    compat: Compat = Field("ragassay", description=COMPAT_DESCRIPTION)


# -- helpers (also used by plugins/match_judge.py) ----------------------------------------------


def usable_references(sample: Sample) -> list[str] | Unscored:
    """The sample's reference answers that keep at least one token after normalisation, or the reason."""
    if not sample.reference_answers:
        return Unscored(reason="sample has no reference_answers")
    usable = [ref for ref in sample.reference_answers if answer_tokens(ref)]
    if not usable:
        return Unscored(reason="every reference answer is empty after normalisation")
    return usable


def answer_overlap(sample: Sample, answer: str, compat: str, field: str) -> float | Unscored:
    """One measure (``field``: precision, recall or f1) of ``answer`` against the reference answers, best over
    references; unscored (ragassay mode) or 0 (unitxt mode) without a usable reference."""
    if compat == "unitxt":
        best = best_overlap(answer, sample.reference_answers)
        return 0.0 if best is None else getattr(best, field)
    refs = usable_references(sample)
    if isinstance(refs, Unscored):
        return refs
    return getattr(best_overlap(answer, refs), field)


def contains_tokens(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Whether ``needle`` occurs as a contiguous run of whole tokens in ``haystack`` (empty never does)."""
    n = len(needle)
    if n == 0:
        return False
    hay, run, first = tuple(haystack), tuple(needle), needle[0]
    return any(hay[i] == first and hay[i : i + n] == run for i in range(len(hay) - n + 1))


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
    Source: Unitxt RAG support, 'Answer Correctness' (seeds/004), Unitxt ``TokenOverlap`` recall
    (``metrics.rag.end_to_end.answer_correctness``); Adlakha et al. 2023, 'Evaluating Correctness and
    Faithfulness of Instruction-Following Models for Question Answering', token-level Recall. Unscored without a
    usable reference (``compat="unitxt"``: 0).
    """

    name = "token_recall"
    requires = frozenset({"reference_answers", "answer"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = LexicalOptions
    formula = "max_r |tokens(answer) ∩ tokens(r)| / |tokens(r)|  (multiset intersection)"
    source = "Unitxt RAG support, 'Answer Correctness' (seeds/004); Adlakha et al. 2023, token-level Recall"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        return answer_overlap(sample, output.answer, self.options.compat, "recall")


class TokenF1(Metric):
    """SQuAD F1: harmonic mean of token precision and recall, best over the reference answers.

    Formula: max over r of 2·P·R / (P + R) with P = |a ∩ r| / |a|, R = |a ∩ r| / |r| (multiset tokens),
    0 when a ∩ r is empty. Source: SQuAD v1.1 official evaluation script (Rajpurkar et al. 2016,
    ``f1_score``); Unitxt ``TokenOverlap`` f1. Unscored without a usable reference (``compat="unitxt"``: 0).
    """

    name = "token_f1"
    requires = frozenset({"reference_answers", "answer"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = LexicalOptions
    formula = "max_r 2·P·R/(P+R),  P = |a ∩ r|/|a|,  R = |a ∩ r|/|r|  (multiset tokens; 0 if no overlap)"
    source = "SQuAD v1.1 evaluation script, f1_score (Rajpurkar et al. 2016); Unitxt TokenOverlap f1"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        return answer_overlap(sample, output.answer, self.options.compat, "f1")


class KPrecisionOptions(BaseModel):
    """Options of ``k_precision``: how the retrieved contexts are pooled (see :class:`KPrecision`)."""

    model_config = ConfigDict(extra="forbid")

    pool: Literal["joined", "each"] | None = Field(
        None,
        description="'joined': precision against all retrieved contexts together (the default); "
        "'each': best precision against any single context (what Unitxt's faithfulness computes; the default "
        "with compat='unitxt').",
    )
    compat: Compat = Field("ragassay", description=COMPAT_DESCRIPTION)

    @model_validator(mode="after")
    def _unitxt_pools_each(self) -> KPrecisionOptions:
        if self.compat == "unitxt" and self.pool == "joined":
            raise ValueError("compat='unitxt' computes K-precision per context (pool='each'); drop pool='joined'")
        return self

    @property
    def pooling(self) -> str:
        """The pooling in effect: the option, else 'each' in unitxt mode and 'joined' otherwise."""
        return self.pool or ("each" if self.compat == "unitxt" else "joined")


class KPrecision(Metric):
    """Faithfulness (Unitxt K-Precision): share of answer tokens that occur in the retrieved contexts.

    Formula: |tokens(answer) ∩ tokens(c_1 ⊕ … ⊕ c_n)| / |tokens(answer)|, multiset intersection over the
    concatenated contexts (option ``pool="each"``: max over single contexts, as Unitxt's
    ``metrics.rag.end_to_end.answer_faithfulness`` does). Source: Unitxt RAG support, 'Faithfulness'
    (seeds/004); Adlakha et al. 2023, K-Precision. Unscored when the output has no contexts or the answer is
    empty after normalisation (``compat="unitxt"``: 0).
    """

    name = "k_precision"
    requires = frozenset({"answer", "contexts"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = KPrecisionOptions
    formula = "|tokens(answer) ∩ tokens(contexts joined)| / |tokens(answer)|  (multiset intersection)"
    source = "Unitxt RAG support, 'Faithfulness' (seeds/004); Adlakha et al. 2023, K-Precision"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        unitxt = self.options.compat == "unitxt"
        if not output.contexts:
            return 0.0 if unitxt else Unscored(reason="no retrieved contexts to be faithful to")
        if not token_bag(output.answer).size:
            return 0.0 if unitxt else Unscored(reason="answer is empty after normalisation")
        contexts = output.contexts if self.options.pooling == "each" else [" ".join(output.contexts)]
        return best_overlap(output.answer, contexts).precision


class AnswerRelevanceTokenRecall(Metric):
    """Lexical answer relevance (Unitxt): share of the question's tokens that the answer repeats.

    Formula: |tokens(answer) ∩ tokens(question)| / |tokens(question)|, multiset intersection. Source: Unitxt
    catalog ``metrics.rag.end_to_end.answer_relevance.token_recall`` (``TokenOverlap`` recall with the question as
    the only reference), the lexical counterpart of seeds/004's answer relevance. Unscored when the question has no
    tokens (``compat="unitxt"``: 0). An empty answer scores 0.
    """

    name = "answer_relevance_token_recall"
    requires = frozenset({"question", "answer"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = LexicalOptions
    formula = "|tokens(answer) ∩ tokens(question)| / |tokens(question)|  (multiset intersection)"
    source = "Unitxt catalog metrics.rag.end_to_end.answer_relevance.token_recall (TokenOverlap recall); seeds/004"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        if not token_bag(sample.question).size and self.options.compat != "unitxt":
            return Unscored(reason="question is empty after normalisation")
        return best_overlap(output.answer, [sample.question]).recall


class ContextRelevanceTokenPrecision(Metric):
    """Lexical context relevance (Unitxt): share of the question's tokens found in the best retrieved context.

    Formula: max over contexts c of |tokens(question) ∩ tokens(c)| / |tokens(question)|, multiset intersection.
    Source: Unitxt catalog ``metrics.rag.end_to_end.context_relevance.token_precision`` (``TokenOverlap``
    precision with the question as prediction and the contexts as references); seeds/004 'Context-Relevance'
    (the lexical stand-in for the perplexity score). Unscored without contexts or when the question has no
    tokens (``compat="unitxt"``: 0).
    """

    uses_answer = False  # question, contexts and references only

    name = "context_relevance_token_precision"
    requires = frozenset({"question", "contexts"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = LexicalOptions
    formula = "max_c |tokens(question) ∩ tokens(c)| / |tokens(question)|  (multiset intersection)"
    source = "Unitxt catalog metrics.rag.end_to_end.context_relevance.token_precision (TokenOverlap precision)"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        unitxt = self.options.compat == "unitxt"
        if not output.contexts:
            return 0.0 if unitxt else Unscored(reason="no retrieved contexts")
        if not token_bag(sample.question).size:
            return 0.0 if unitxt else Unscored(reason="question is empty after normalisation")
        return best_overlap(sample.question, output.contexts).precision


class ExactMatch(Metric):
    """SQuAD exact match: 1 if the normalised answer equals some normalised reference answer, else 0.

    Formula: max over r of [normalize(answer) == normalize(r)]. Source: SQuAD v1.1 official evaluation
    script (Rajpurkar et al. 2016, ``exact_match_score``). Unscored without a usable reference.
    """

    name = "exact_match"
    requires = frozenset({"reference_answers", "answer"})
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
    requires = frozenset({"reference_answers", "answer"})
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
    for metric in (
        TokenRecall,
        TokenF1,
        KPrecision,
        ExactMatch,
        ContainsAnswer,
        AnswerRelevanceTokenRecall,
        ContextRelevanceTokenPrecision,
    ):
        register(metric)
