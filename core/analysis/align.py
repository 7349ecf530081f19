"""Aligning a judge to people (``ragassay align``): labelled exemplars in its prompt, chosen from one part of the
labelled items, the change in agreement measured on the other part only. Binary rubrics only: an ordinal or pairwise
rubric is refused with the reason (no shipped judge scores on such a scale; see docs/labelling.md).

1. **Split.** The labelled questions (not outputs: two systems' answers to one question stay on one side) are
   shuffled by the seeded generator of :mod:`.bootstrap` and cut: the first ``round(pool_share * n)`` form the
   exemplar pool, the rest the held-out test split.
2. **Choose** K exemplars from the pool by a documented rule:
   ``random``: K pool items drawn without replacement;
   ``stratified``: the people's labels taken in turn (0, 1, 0, 1, ...), each class's items in the shuffled order,
   so the classes are as equal as the pool allows;
   ``nearest``: as stratified, but each class's items ordered by cosine similarity of their embedding (question and
   answer) to the centroid of that class in the pool, the most typical first.
3. **Assert disjoint**: no exemplar (neither a chosen one nor one the judge already carries) may be a held-out item,
   by item and by content (question and answer); a leak is a ConfigError, never a number.
4. **Compare** the judge and its variant on the held-out items only: agreement a_i = [verdict_i = label_i]; the
   change is mean(a_variant - a_original) over the items both judged, with the interval of the paired sign-flip
   procedure (:mod:`.paired`), which rejects "no change" exactly when it excludes 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from ..errors import ConfigError
from .bootstrap import generator

RULES = ("stratified", "nearest", "random")


@dataclasses.dataclass(frozen=True)
class Split:
    """Questions in the exemplar pool and in the held-out test split."""

    pool: list[str]
    test: list[str]


def split_questions(questions: Sequence[str], pool_share: float, seed: int) -> Split:
    """The seeded split of step 1 (sorted questions, shuffled, cut)."""
    ordered = sorted(set(questions))
    if not 0 < pool_share < 1:
        raise ConfigError(f"--pool-share must be between 0 and 1 (exclusive), got {pool_share}")
    shuffled = [ordered[i] for i in generator(seed).permutation(len(ordered))]
    cut = round(pool_share * len(shuffled))
    return Split(shuffled[:cut], shuffled[cut:])


def choose_exemplars(
    pool: Sequence[Hashable],
    labels: dict[Hashable, bool],
    k: int,
    rule: str,
    seed: int,
    embed: Callable[[list[Hashable]], np.ndarray] | None = None,
) -> list[Hashable]:
    """K items of ``pool`` by ``rule`` (module docstring, step 2); ``embed`` maps items to row vectors (nearest)."""
    if rule not in RULES:
        raise ConfigError(f"unknown rule '{rule}'; one of {', '.join(RULES)}")
    if k > len(pool):
        raise ConfigError(f"--examples {k} but the exemplar pool has {len(pool)} labelled items; lower it")
    order = [pool[i] for i in generator(seed).permutation(len(pool))]
    if rule == "random":
        return order[:k]
    classes = {
        label: [item for item in order if labels[item] == label] for label in sorted(set(labels[i] for i in pool))
    }
    if rule == "nearest":
        if embed is None:
            raise ConfigError("the nearest rule needs an embedder: name one with --embedder NAME")
        classes = {label: _most_typical(items, embed) for label, items in classes.items()}
    chosen: list[Hashable] = []
    while len(chosen) < k:
        for items in classes.values():
            if items and len(chosen) < k:
                chosen.append(items.pop(0))
    return chosen


def _most_typical(items: list[Hashable], embed) -> list[Hashable]:
    vectors = np.asarray(embed(items), dtype=float)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = vectors @ vectors.mean(axis=0)
    return [items[i] for i in np.argsort(-similarity, kind="stable")]


def assert_disjoint(exemplars: dict[Hashable, tuple[str, str]], test: dict[Hashable, tuple[str, str]]) -> None:
    """ConfigError when an exemplar is a held-out item, by key or by (question, answer) content."""
    by_key = sorted(str(k) for k in set(exemplars) & set(test))
    contents = set(test.values())
    by_content = sorted(str(k) for k, content in exemplars.items() if content in contents)
    leaked = by_key or by_content
    if leaked:
        raise ConfigError(
            f"exemplars and held-out test items overlap ({', '.join(leaked[:5])}): agreement on them would be "
            "measured on what the judge was shown. Remove those exemplars from the judge's options, or label "
            "other items"
        )


@dataclasses.dataclass(frozen=True)
class Agreement:
    """Agreement of one judge with people on the held-out items."""

    judged: int
    unscored: int
    agreeing: int

    @property
    def accuracy(self) -> float | None:
        return self.agreeing / self.judged if self.judged else None


@dataclasses.dataclass(frozen=True)
class Change:
    """Held-out agreement of the original and the variant, and the paired change."""

    original: Agreement
    variant: Agreement
    paired: int  # items both judged
    change: float | None  # mean(a_variant - a_original) over the paired items
    low: float | None
    high: float | None
    p_value: float | None
    significant: bool


def agreement_of(truth: dict[Hashable, bool], verdicts: dict[Hashable, bool | None]) -> Agreement:
    """How many held-out items the judge judged and agreed on."""
    judged = [k for k in truth if verdicts.get(k) is not None]
    return Agreement(len(judged), len(truth) - len(judged), sum(verdicts[k] == truth[k] for k in judged))


def compare(
    truth: dict[Hashable, bool],
    original: dict[Hashable, bool | None],
    variant: dict[Hashable, bool | None],
    *,
    alpha: float = 0.05,
    seed: int = 0,
) -> Change:
    """Step 4 of the module docstring."""
    from .paired import PairInput, decide_family

    both = sorted((k for k in truth if original.get(k) is not None and variant.get(k) is not None), key=str)
    differences = np.array([float(variant[k] == truth[k]) - float(original[k] == truth[k]) for k in both])
    first, second = agreement_of(truth, original), agreement_of(truth, variant)
    if not len(both):
        return Change(first, second, 0, None, None, None, None, False)
    (outcome,) = decide_family([PairInput("agreement", differences)], alpha, seed)
    return Change(
        first,
        second,
        len(both),
        float(differences.mean()),
        outcome.ci_low,
        outcome.ci_high,
        outcome.p_value,
        outcome.rejected,
    )
