"""The exemplar rules of ``ragassay align`` (ragassay.analysis.align): the seeded split of the questions, the
stratified, random and nearest choices from the pool, and the disjointness of exemplars and held-out items. The
command on Aurp's labelled answers is tests/core/cli/test_align_cli.py."""

from __future__ import annotations

import pytest

from ragassay import ConfigError
from ragassay.analysis.align import assert_disjoint, choose_exemplars, split_questions


def test_split_is_seeded_and_rules_choose_from_the_pool():
    questions = [f"q{i}" for i in range(10)]
    split = split_questions(questions, 0.5, seed=1)
    assert split == split_questions(list(reversed(questions)), 0.5, seed=1)
    assert sorted(split.pool + split.test) == sorted(questions) and len(split.pool) == 5
    labels = {f"i{i}": i < 2 for i in range(8)}  # two positives, six negatives
    pool = sorted(labels)
    stratified = choose_exemplars(pool, labels, 4, "stratified", seed=0)
    assert sorted(labels[i] for i in stratified) == [False, False, True, True]
    assert len(set(choose_exemplars(pool, labels, 5, "random", seed=0))) == 5
    vectors = {item: [1.0, float(i)] for i, item in enumerate(pool)}
    nearest = choose_exemplars(pool, labels, 2, "nearest", seed=0, embed=lambda items: [vectors[i] for i in items])
    assert [labels[i] for i in nearest] == [False, True]
    with pytest.raises(ConfigError, match="needs an embedder"):
        choose_exemplars(pool, labels, 2, "nearest", seed=0)
    with pytest.raises(ConfigError, match="--examples 9 but the exemplar pool has 8"):
        choose_exemplars(pool, labels, 9, "random", seed=0)


def test_disjointness_by_item_and_by_content():
    assert_disjoint({"a": ("q1", "x")}, {"b": ("q2", "y")})
    with pytest.raises(ConfigError, match=r"overlap \(a\)"):
        assert_disjoint({"a": ("q1", "x")}, {"a": ("q1", "x")})
    with pytest.raises(ConfigError, match=r"overlap \(c\)"):
        assert_disjoint({"c": ("q2", "y")}, {"b": ("q2", "y")})
