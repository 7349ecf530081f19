"""Semantic groups (Figure 1), R (Eq. 1), Acc (Eq. 2) and knowledge accuracy on hand-made groups."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ragassay.analysis.groups import GAP, NON_ROBUST, ROBUST, Outcome, categorize, classify, score


def outcomes(spec: dict[str, str], attribute: str | None = None) -> list[Outcome]:
    """{'g1': '001'} -> outcomes of group g1, correct where the character is 1."""
    return [
        Outcome(f"{gid}/{i}", gid, flag == "1", {"form": attribute or ("short" if i % 2 == 0 else "long")})
        for gid, flags in spec.items()
        for i, flag in enumerate(flags)
    ]


def test_classify_follows_figure_1():
    assert classify([False, False, False]) == GAP
    assert classify([True, True]) == ROBUST
    assert classify([True, False, False]) == NON_ROBUST
    assert classify([True]) == ROBUST and classify([False]) == GAP
    with pytest.raises(ValueError):
        classify([])


def test_the_papers_equations_on_three_groups():
    # one gap group (0/3 correct), one robust (3/3), one non-robust (1/3)
    scores = score(outcomes({"gap": "000", "robust": "111", "non": "100"}))
    assert (scores.total, scores.correct, scores.gap_total) == (9, 4, 3)
    assert scores.groups == {GAP: 1, ROBUST: 1, NON_ROBUST: 1}
    assert scores.robustness == pytest.approx(4 / 6)  # Eq. 1: 4 / (9 - 3)
    assert scores.accuracy == pytest.approx(4 / 6 * 6 / 9) == pytest.approx(4 / 9)  # Eq. 2
    assert scores.knowledge_accuracy == pytest.approx(2 / 3)
    assert scores.gap_share == pytest.approx(3 / 9)


def test_acc_equals_plain_accuracy_and_r_ignores_gap_groups():
    spec = {"a": "1101", "b": "0000", "c": "11", "d": "0", "e": "0001"}
    scores = score(outcomes(spec))
    correct = sum(flags.count("1") for flags in spec.values())
    assert scores.total == 15 and correct == 6
    assert scores.accuracy == pytest.approx(correct / 15)
    assert scores.robustness == pytest.approx(Fraction(correct, 15 - 5))  # b and d are gaps: 5 instances


def test_all_gap_groups_give_no_r_and_zero_acc():
    scores = score(outcomes({"a": "00", "b": "0"}))
    assert scores.robustness is None and scores.accuracy == 0.0 and scores.knowledge_accuracy == 0.0
    empty = score([])
    assert empty.accuracy is None and empty.robustness is None and empty.knowledge_accuracy is None


def test_a_cluster_is_scored_with_the_categories_of_its_whole_groups():
    everything = outcomes({"g1": "10", "g2": "00", "g3": "01"})  # even index = short, odd = long
    categories = categorize(everything)
    long_only = [o for o in everything if o.attributes["form"] == "long"]
    # within the long cluster alone g1 looks like a gap; over both clusters it is non-robust
    alone, shared = score(long_only), score(long_only, categories)
    assert alone.gap_total == 2 and alone.robustness == pytest.approx(1.0)
    assert shared.gap_total == 1 and shared.robustness == pytest.approx(1 / 2)
    assert shared.as_dict()["groups"] == {GAP: 1, ROBUST: 0, NON_ROBUST: 2}
