"""Stratified and unbalanced sampling of grouped samples (GRAMMAR section 4.2), seeded and reproducible.

Both work one group or one item at a time, so a generator can apply them while streaming, and the report
applies the same functions to stored samples:

- **stratified** (SS): every semantic group keeps the same number of items, ``per_group`` (for each value of
  an attribute ``by`` when given, e.g. as many long as short queries). A group with fewer is left out.
- **unbalanced** (US): the items whose entity attribute (``table``) has a reduction are removed at random
  with that probability, e.g. half of the queries about clients and employees.

Randomness comes from the seed and the group or item id only (never from the order of the stream), so the
same data and seed always give the same subset.

The seeded processing order of a budget-limited or sequential run (:func:`seeded_order`) lives here too: the
engine processes samples in it, and the analyses describe a partial run by it (:func:`partial_text`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def _attributes(item: Any) -> Mapping[str, Any]:
    return item.attributes if hasattr(item, "attributes") else item.get("attributes", {})


def _id(item: Any) -> str:
    return item.question_id if hasattr(item, "question_id") else item["question_id"]


def stratify_group(
    items: Sequence[T],
    group_id: str,
    per_group: int,
    *,
    by: str | None = None,
    seed: int = 0,
    attributes: Callable[[T], Mapping[str, Any]] = _attributes,
) -> list[T]:
    """The items of one group kept by stratified sampling (original order), or [] if the group is too small.

    With ``by``, ``per_group`` items are kept for every value of that attribute present in the group. The
    choice depends on the seed, the group id and the items' ids, not on the order the items come in.
    """
    cells: dict[str, list[int]] = {}
    for position, item in enumerate(items):
        value = str(attributes(item).get(by)) if by else ""
        cells.setdefault(value, []).append(position)
    if not cells or any(len(positions) < per_group for positions in cells.values()):
        return []
    kept: list[int] = []
    for value, positions in sorted(cells.items()):
        rng = random.Random(f"{seed}|{group_id}|{value}")
        kept += rng.sample(sorted(positions, key=lambda i: _id(items[i])), per_group)
    return [items[i] for i in sorted(kept)]


def unit_interval(seed: int, key: str) -> float:
    """A number in [0, 1) determined by ``seed`` and ``key`` (a stable hash, not Python's ``hash``)."""
    digest = hashlib.blake2b(f"{seed}|{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def keep_unbalanced(question_id: str, entity: Any, reduce: Mapping[str, float], seed: int = 0) -> bool:
    """Whether unbalanced sampling keeps this item: removed with probability ``reduce[entity]``."""
    fraction = reduce.get(str(entity), 0.0)
    return fraction <= 0 or unit_interval(seed, question_id) >= fraction


def stratified_subset(
    items: Iterable[T],
    per_group: int,
    *,
    by: str | None = None,
    seed: int = 0,
    group_of: Callable[[T], str] = lambda item: item.group_id,
) -> list[T]:
    """Stratified sampling over a whole collection (groups in first-seen order)."""
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(group_of(item), []).append(item)
    return [
        kept for gid, members in groups.items() for kept in stratify_group(members, gid, per_group, by=by, seed=seed)
    ]


def unbalanced_subset(
    items: Iterable[T],
    reduce: Mapping[str, float],
    *,
    attribute: str = "table",
    seed: int = 0,
    id_of: Callable[[T], str] = lambda item: item.question_id,
) -> list[T]:
    """Unbalanced sampling over a whole collection."""
    return [item for item in items if keep_unbalanced(id_of(item), _attributes(item).get(attribute), reduce, seed)]


def order_key(seed: int, question_id: str) -> int:
    """The seeded sort key of a sample: the first 8 bytes of sha256("<seed>:<question id>"), an integer."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{question_id}".encode()).digest()[:8], "big")


def unit_order_key(seed: int, question_id: str, cluster: str | None = None) -> tuple[int, int]:
    """The seeded sort key of a sample in its unit: (:func:`order_key` of its cluster, of its question id).

    The cluster is the sample's conversation (:attr:`ragassay.models.Sample.cluster`; None or the question id
    itself: a single question), so the turns of one conversation come together, the conversations in a seeded
    random order, and the order of single questions is :func:`order_key`'s."""
    own = order_key(seed, question_id)
    return (own if cluster is None or cluster == question_id else order_key(seed, cluster)), own


def seeded_order(seed: int, question_ids: Sequence[str], clusters: Sequence[str] | None = None) -> list[int]:
    """Positions of ``question_ids`` in the seeded processing order: ascending :func:`unit_order_key` (whole
    conversations when ``clusters`` gives each sample's conversation). The one order of a budget-limited or
    sequential run (:meth:`SampleSpool.shuffled`) and of its replay
    (:func:`ragassay.analysis.sequential_replay.replay`)."""
    units = clusters if clusters is not None else [None] * len(question_ids)
    return sorted(range(len(question_ids)), key=lambda i: unit_order_key(seed, question_ids[i], units[i]))


def partial_text(done: int, total: int, seed: int | None) -> str:
    """What ``done`` of ``total`` samples processed in the seeded order of ``seed`` are: ``partial: N of M samples,
    a uniform random subset (seed S)``; for the file order (``seed`` None): ``partial: the first N of M samples in
    file order, not a random subset``."""
    if seed is None:
        return f"partial: the first {done} of {total} samples in file order, not a random subset"
    return f"partial: {done} of {total} samples, a uniform random subset (seed {seed})"
