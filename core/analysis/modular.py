"""Modular evaluation: which module to blame for a wrong answer (GRAMMAR section 3.4, "context comparison").

For every wrong answer in a non-robust group, its retrieved documents are compared with those of the correct
answers of the same group. If they match one of them, the retrieval provided a context that was sufficient
for a correct answer, so the language model is to blame (``lm``); otherwise the retrieval is blamed
(``retrieval``). Where no comparison is possible (no correct answer with known retrieved documents, or the
wrong answer reports none), the blame is ``undetermined``. As the paper notes, a missing match does not
prove a retrieval failure; it is the best evidence the group offers.

When the samples carry ground-truth documents (``reference_context_ids``), the ground-truth variant blames
the LM for a wrong answer whose retrieved documents include every reference document, and the retrieval
otherwise, for wrong answers in any group.

Excluding the LM-blamed answers and scoring again gives the retrieval module's own R and Acc (Table 2,
"+Modular Evaluation (Retrieval)").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from .groups import NON_ROBUST, Outcome, by_group, categorize

LM, RETRIEVAL, UNDETERMINED = "lm", "retrieval", "undetermined"
BLAMES = (LM, RETRIEVAL, UNDETERMINED)


def _matches(wrong: frozenset[str], correct: frozenset[str], mode: str) -> bool:
    return wrong == correct if mode == "same_set" else wrong >= correct


def context_blame(
    outcomes: Sequence[Outcome], categories: Mapping[str, str] | None = None, match: str = "same_set"
) -> dict[str, str]:
    """question_id -> lm / retrieval / undetermined, for each wrong answer of a non-robust group.

    :param match: ``same_set`` (the retrieved document sets are equal, the paper's comparison) or
        ``superset`` (the wrong answer's documents include all of a correct answer's).
    """
    if match not in ("same_set", "superset"):
        raise ValueError(f"unknown context match {match!r}; use 'same_set' or 'superset'")
    categories = categorize(outcomes) if categories is None else categories
    blame: dict[str, str] = {}
    for gid, members in by_group(outcomes).items():
        if categories.get(gid) != NON_ROBUST:
            continue
        references = [o.retrieved for o in members if o.correct and o.retrieved]
        for outcome in members:
            if outcome.correct:
                continue
            if not references or not outcome.retrieved:
                blame[outcome.question_id] = UNDETERMINED
            elif any(_matches(outcome.retrieved, ref, match) for ref in references):
                blame[outcome.question_id] = LM
            else:
                blame[outcome.question_id] = RETRIEVAL
    return blame


def ground_truth_blame(outcomes: Iterable[Outcome]) -> dict[str, str]:
    """question_id -> lm / retrieval / undetermined for every wrong answer, judged by reference documents."""
    blame: dict[str, str] = {}
    for outcome in outcomes:
        if outcome.correct:
            continue
        if not outcome.reference or outcome.retrieved is None:
            blame[outcome.question_id] = UNDETERMINED
        else:
            blame[outcome.question_id] = LM if outcome.reference <= outcome.retrieved else RETRIEVAL
    return blame


def without_lm_failures(outcomes: Sequence[Outcome], blame: Mapping[str, str]) -> list[Outcome]:
    """The outcomes left when the answers blamed on the LM are excluded (retrieval-only evaluation)."""
    return [o for o in outcomes if blame.get(o.question_id) != LM]


def blame_counts(blame: Mapping[str, str]) -> dict[str, int]:
    """How many wrong answers each module is blamed for (every category present, zero included)."""
    counts = Counter(blame.values())
    return {name: counts.get(name, 0) for name in BLAMES}


def has_references(outcomes: Iterable[Outcome]) -> bool:
    """Whether any outcome has ground-truth documents (the ground-truth variant applies)."""
    return any(o.reference for o in outcomes)
