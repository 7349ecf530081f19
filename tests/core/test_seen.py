"""``SeenKeys``: unique keys of a long stream with bounded memory, in memory first, then in a temporary file."""

from __future__ import annotations

from ragassay import DuplicateKey, SeenKeys


def test_a_duplicate_in_memory_is_reported_at_once_with_both_values():
    seen = SeenKeys(in_memory=10)
    assert seen.add("a", 1) is None and seen.add("b", 2) is None
    assert seen.add("a", 3) == DuplicateKey("a", 1, 3)
    assert seen.flush() is None and seen.count == 2


def test_past_the_memory_bound_keys_go_to_a_file_and_duplicates_are_still_found():
    seen = SeenKeys(in_memory=5, batch=4)
    found = [seen.add(f"k{i}", i) for i in range(20)]
    assert found == [None] * 20 and seen._db is not None and len(seen._memory) < 5  # spilled, memory bounded
    duplicate = next(d for d in (seen.add("x", 20), seen.add("k3", 21), seen.add("y", 22), seen.add("z", 23)) if d)
    assert duplicate == DuplicateKey("k3", 3, 21)  # found when its batch is checked, with the first line
    seen.close()


def test_a_duplicate_in_the_last_batch_is_reported_by_flush():
    seen = SeenKeys(in_memory=3, batch=100)
    for i in range(10):
        assert seen.add(f"k{i}", i) is None
    assert seen.add("k1", 99) is None  # held in the unchecked batch
    assert seen.flush() == DuplicateKey("k1", 1, 99)


def test_many_unique_keys_are_never_reported():
    seen = SeenKeys(in_memory=100, batch=250)
    assert not any(seen.add(f"q{i}", i) for i in range(5_000)) and seen.flush() is None
    assert seen.count == 5_000
    seen.close()
