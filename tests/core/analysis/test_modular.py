"""Modular evaluation by context comparison (section 3.4) and its ground-truth variant."""

from __future__ import annotations

import pytest

from ragassay.analysis.groups import Outcome, score
from ragassay.analysis.modular import (
    LM,
    RETRIEVAL,
    UNDETERMINED,
    blame_counts,
    context_blame,
    ground_truth_blame,
    without_lm_failures,
)


def o(qid: str, group: str, correct: bool, retrieved=None, reference=()) -> Outcome:
    return Outcome(qid, group, correct, {}, None if retrieved is None else frozenset(retrieved), frozenset(reference))


GROUP = [
    o("ok1", "g", True, ["a", "b"], ["a"]),
    o("ok2", "g", True, ["c"], ["a"]),
    o("lm", "g", False, ["b", "a"], ["a"]),  # same documents as ok1: the context sufficed, the LM failed
    o("ret", "g", False, ["d"], ["a"]),  # no correct answer retrieved these: blame retrieval
    o("sup", "g", False, ["a", "b", "e"], ["a"]),  # a superset of ok1's documents
    o("none", "g", False, None, ["a"]),  # the system reported no retrieved documents
]


def test_context_comparison_blames_lm_retrieval_or_undetermined():
    blame = context_blame(GROUP)
    assert blame == {"lm": LM, "ret": RETRIEVAL, "sup": RETRIEVAL, "none": UNDETERMINED}
    assert blame_counts(blame) == {"lm": 1, "retrieval": 2, "undetermined": 1}


def test_superset_matching_is_an_option():
    assert context_blame(GROUP, match="superset")["sup"] == LM
    with pytest.raises(ValueError, match="unknown context match"):
        context_blame(GROUP, match="fuzzy")


def test_only_wrong_answers_of_non_robust_groups_are_compared():
    gap = [o("x1", "gap", False, ["a"]), o("x2", "gap", False, ["a"])]
    robust = [o("y1", "rob", True, ["a"])]
    assert context_blame(gap + robust) == {}


def test_no_correct_answer_with_documents_is_undetermined():
    group = [o("c", "g", True, None), o("w", "g", False, ["a"])]
    assert context_blame(group) == {"w": UNDETERMINED}


def test_excluding_lm_failures_gives_the_retrievals_own_r():
    before, after = score(GROUP), score(without_lm_failures(GROUP, context_blame(GROUP)))
    assert (before.total, before.correct) == (6, 2) and before.robustness == pytest.approx(2 / 6)
    assert (after.total, after.correct) == (5, 2) and after.robustness == pytest.approx(2 / 5)


def test_ground_truth_blame_uses_reference_documents():
    blame = ground_truth_blame(GROUP + [o("gap", "h", False, ["z"], ["a"]), o("noref", "h", False, ["a"])])
    assert blame == {
        "lm": LM,
        "ret": RETRIEVAL,
        "sup": LM,
        "none": UNDETERMINED,
        "gap": RETRIEVAL,
        "noref": UNDETERMINED,
    }
