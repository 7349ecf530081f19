"""Semantic groups, robustness R and accuracy Acc (GRAMMAR section 3.4, Figure 1, Eq. 1 and Eq. 2).

Every text query generated from one filled SQL query belongs to one semantic group (Appendix E). Given a
model's correctness on each query, a group is

- a **gap** group when no query of the group is answered correctly (a knowledge gap),
- a **robust** group when every query is answered correctly,
- a **non-robust** group when some, but not all, are.

Then, with "#" the number of instances (Eq. 1 and Eq. 2)::

    R   = # correct / (# total - # in gap groups)
    Acc = R * (# total - # in gap groups) / # total          (= # correct / # total)

and the knowledge accuracy is the share of groups that are not gaps: (robust + non-robust) / groups.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

GAP, ROBUST, NON_ROBUST = "gap", "robust", "non-robust"
CATEGORIES = (GAP, ROBUST, NON_ROBUST)


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One judged answer: which group its query belongs to, whether it was correct, what it retrieved."""

    question_id: str
    group_id: str
    correct: bool
    attributes: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    retrieved: frozenset[str] | None = None  # document ids retrieved; None when the system reported none
    reference: frozenset[str] = frozenset()  # ground-truth document ids (reference_context_ids)


@dataclasses.dataclass(frozen=True)
class Scores:
    """Counts and the GRAMMAR metrics of a set of outcomes (a cluster, or all of them)."""

    total: int
    correct: int
    gap_total: int
    groups: Mapping[str, int]  # category -> number of groups with at least one outcome here

    __json_properties__ = ("robustness", "accuracy", "gap_share", "knowledge_accuracy")

    @property
    def robustness(self) -> float | None:
        """Eq. 1: correct / (total - total in gap groups); None when every instance is in a gap group."""
        competent = self.total - self.gap_total
        return self.correct / competent if competent else None

    @property
    def accuracy(self) -> float | None:
        """Eq. 2: R x (total - total in gap groups) / total; None for no instance."""
        if not self.total:
            return None
        r = self.robustness
        return 0.0 if r is None else r * (self.total - self.gap_total) / self.total

    @property
    def gap_share(self) -> float | None:
        """lambda: the share of instances that belong to gap groups."""
        return self.gap_total / self.total if self.total else None

    @property
    def knowledge_accuracy(self) -> float | None:
        """Competent (robust or non-robust) groups / groups."""
        groups = sum(self.groups.values())
        return (self.groups.get(ROBUST, 0) + self.groups.get(NON_ROBUST, 0)) / groups if groups else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "correct": self.correct,
            "gap_total": self.gap_total,
            "groups": {c: self.groups.get(c, 0) for c in CATEGORIES},
            "R": self.robustness,
            "Acc": self.accuracy,
            "lambda": self.gap_share,
            "knowledge_accuracy": self.knowledge_accuracy,
        }


def classify(flags: Iterable[bool]) -> str:
    """The category of a group from the correctness of its queries (Figure 1)."""
    flags = list(flags)
    if not flags:
        raise ValueError("a semantic group needs at least one query to be classified")
    hits = sum(flags)
    return GAP if hits == 0 else ROBUST if hits == len(flags) else NON_ROBUST


def by_group(outcomes: Iterable[Outcome]) -> dict[str, list[Outcome]]:
    """Outcomes by group id, groups in first-seen order."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[outcome.group_id].append(outcome)
    return dict(groups)


def categorize(outcomes: Iterable[Outcome]) -> dict[str, str]:
    """Group id -> gap / robust / non-robust, over the given outcomes."""
    return {gid: classify(o.correct for o in members) for gid, members in by_group(outcomes).items()}


def score(outcomes: Sequence[Outcome], categories: Mapping[str, str] | None = None) -> Scores:
    """Scores of ``outcomes``; group categories are computed over them unless given.

    Giving ``categories`` computed over a larger set (both clusters of a hypothesis) scores a cluster with
    the groups' overall categories: an instance counts as 'in a gap group' when its whole group is a gap.
    """
    categories = categorize(outcomes) if categories is None else categories
    gap_total = sum(1 for o in outcomes if categories[o.group_id] == GAP)
    groups = Counter(categories[gid] for gid in {o.group_id for o in outcomes})
    return Scores(len(outcomes), sum(o.correct for o in outcomes), gap_total, dict(groups))
