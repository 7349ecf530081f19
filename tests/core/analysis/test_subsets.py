"""Stratified and unbalanced subsets (section 4.2): seeded, order-independent, per group and per item."""

from __future__ import annotations

import random
from collections import Counter

from ragassay.analysis.groups import Outcome
from ragassay.sampling import (
    keep_unbalanced,
    stratified_subset,
    stratify_group,
    unbalanced_subset,
    unit_interval,
)


def items(groups: int = 50, per_form: int = 3) -> list[Outcome]:
    return [
        Outcome(f"g{g}/{form}{i}", f"g{g}", True, {"form": form, "table": "A" if g % 2 else "B"})
        for g in range(groups)
        for form in ("short", "long")
        for i in range(per_form)
    ]


def test_stratify_group_keeps_per_group_for_each_value_in_original_order():
    group = items(1)
    kept = stratify_group(group, "g0", 2, by="form", seed=0)
    assert Counter(o.attributes["form"] for o in kept) == {"short": 2, "long": 2}
    assert kept == [o for o in group if o in kept]
    assert stratify_group(group, "g0", 4, by="form") == []  # too small: the whole group is left out
    assert len(stratify_group(group, "g0", 5)) == 5  # without `by`: 5 of the group's 6


def test_stratified_subset_does_not_depend_on_order():
    data = items()
    shuffled = data[:]
    random.Random(7).shuffle(shuffled)
    a = {o.question_id for o in stratified_subset(data, 1, by="form", seed=5)}
    b = {o.question_id for o in stratified_subset(shuffled, 1, by="form", seed=5)}
    c = {o.question_id for o in stratified_subset(data, 1, by="form", seed=6)}
    assert a == b and a != c and len(a) == 100


def test_unbalanced_subset_removes_about_the_fraction_of_named_entities_only():
    data = items(200, 5)
    kept = unbalanced_subset(data, {"A": 0.4})
    counts = Counter(o.attributes["table"] for o in kept)
    assert counts["B"] == 1000 and 540 < counts["A"] < 660  # 1000 A items, 40% removed at random
    assert kept == unbalanced_subset(list(reversed(data))[::-1], {"A": 0.4})
    assert not keep_unbalanced("x", "A", {"A": 1.0}) and keep_unbalanced("x", "A", {"A": 0.0})


def test_unit_interval_is_stable_and_uniformish():
    assert unit_interval(0, "abc") == unit_interval(0, "abc") != unit_interval(1, "abc")
    values = [unit_interval(0, str(i)) for i in range(2000)]
    assert all(0 <= v < 1 for v in values) and 0.45 < sum(values) / len(values) < 0.55
