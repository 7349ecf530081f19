"""Sampling in the grammar source (section 4.2): stratified and unbalanced, seeded and reproducible."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from grammar_helpers import source

AURP = Path(__file__).resolve().parents[3] / "examples" / "aurp"


def _aurp(**sampling):
    return list(source(AURP, sql_dump="aurp.sql", templates="templates.yaml", sampling=sampling).samples())


@pytest.fixture(scope="module")
def everything():
    return _aurp()


def test_stratified_keeps_the_same_number_per_group_and_per_attribute_value(everything):
    kept = _aurp(mode="stratified", per_group=1, by="query_length", seed=3)
    per_group = Counter((s.group_id, s.query_length) for s in kept)
    assert set(per_group.values()) == {1}
    assert {g for g, _ in per_group} == {s.group_id for s in everything}  # every group has 2 short + 2 long
    assert len(kept) == len(everything) // 2
    assert {s.question_id for s in kept} <= {s.question_id for s in everything}


def test_stratified_is_reproducible_and_depends_on_the_seed():
    a = [s.question_id for s in _aurp(mode="stratified", per_group=1, seed=1)]
    b = [s.question_id for s in _aurp(mode="stratified", per_group=1, seed=1)]
    c = [s.question_id for s in _aurp(mode="stratified", per_group=1, seed=2)]
    assert a == b and a != c and len(a) == len({s.rsplit("/", 1)[0] for s in a}) == 208


def test_stratified_leaves_out_groups_that_are_too_small():
    assert _aurp(mode="stratified", per_group=3, by="query_length") == []


def test_unbalanced_reduces_only_the_named_tables(everything):
    kept = _aurp(mode="unbalanced", reduce={"Client": 0.5, "Employee": 1.0}, seed=0)
    before, after = Counter(s.table for s in everything), Counter(s.table for s in kept)
    assert after["Project"] == before["Project"] and after["Employee"] == 0
    assert 0.3 * before["Client"] < after["Client"] < 0.7 * before["Client"]
    again = _aurp(mode="unbalanced", reduce={"Client": 0.5, "Employee": 1.0}, seed=0)
    assert [s.question_id for s in kept] == [s.question_id for s in again]


def test_reductions_must_be_fractions():
    with pytest.raises(ValidationError, match="between 0 and 1"):
        source(AURP, sql_dump="aurp.sql", sampling={"mode": "unbalanced", "reduce": {"Client": 1.5}})
