"""The order a stored run was processed in, read back from its stored config (runs stored before ``[evaluation]
order`` existed ran seeded only with a budget or sequentially), and the two wordings of the partial note."""

from __future__ import annotations

import pytest

from ragassay.analysis.partial import stored_order_seed
from ragassay.sampling import partial_text


@pytest.mark.parametrize(
    ("evaluation", "status", "seed"),
    [
        ({"order": "seeded", "seed": 7}, "interrupted", 7),
        ({"order": "seeded"}, "interrupted", 42),
        ({"order": "file", "seed": 7}, "budget-limited", None),
        ({}, "interrupted", None),  # before [evaluation] order: the file's order without a budget
        ({}, "budget-limited", 42),
        ({"budget": {"calls": 10}, "seed": 3}, "interrupted", 3),
        ({"sequential": {"batch": 10}}, "running", 42),
    ],
)
def test_stored_order(evaluation, status, seed):
    assert stored_order_seed({"evaluation": evaluation}, status) == seed


def test_wording_names_the_seed_or_the_file_order():
    assert partial_text(3, 10, 5) == "partial: 3 of 10 samples, a uniform random subset (seed 5)"
    assert partial_text(3, 10, None) == "partial: the first 3 of 10 samples in file order, not a random subset"
