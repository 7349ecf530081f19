"""Token overlap and id ranking in Unitxt's semantics: the functions behind the lexical metrics and
``ragassay unitxt score``.

Tokens are those of :func:`ragassay.text.answer_tokens` (SQuAD v1.1 normalisation, as Unitxt's
``TokenOverlap``): lower case, ASCII punctuation removed, the articles 'a', 'an', 'the' removed, split on
whitespace. :func:`token_bag` computes the same tokens faster for plain ASCII text (every word is then a run of
``[a-z0-9]``, so removing articles is dropping three whole tokens) and is memoised, because retrieved contexts
recur across the samples of a dataset.

Overlap is a multiset intersection, ``|a ∩ r| = Σ_t min(count_a(t), count_r(t))`` (Unitxt
``TokenOverlap._compute_single_ref``):

    precision = |a ∩ r| / |a|,  recall = |a ∩ r| / |r|,  f1 = 2·P·R / (P + R),  all 0 when |a ∩ r| = 0.

Against several references each measure is the maximum over the references, taken separately (Unitxt
``TokenOverlap.compute``), so precision and recall may come from different references.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from .text import answer_tokens

_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = frozenset({"a", "an", "the"})
# Anything but printable ASCII and the six ASCII whitespace characters: such text takes the exact regex path.
_NOT_PLAIN = re.compile(r"[^\x09-\x0d\x20-\x7e]")


@dataclasses.dataclass(frozen=True, slots=True)
class TokenBag:
    """The multiset of a text's tokens: ``counts`` (token → occurrences; read-only) and ``size`` (all tokens).

    ``counts`` is a plain dict of strings and ints, which the garbage collector does not track: the memoised bags
    of :func:`token_bag` cost its collections nothing."""

    counts: dict[str, int]
    size: int


def plain_tokens(text: str) -> list[str]:
    """:func:`ragassay.text.answer_tokens` of ``text``, computed without regular expressions when possible."""
    folded = text.lower().translate(_DROP_PUNCTUATION)
    if _NOT_PLAIN.search(folded) is None:
        return [word for word in folded.split() if word not in _ARTICLES]
    return answer_tokens(text)


@functools.lru_cache(maxsize=1 << 13)  # every metric of a unit tokenises the same texts: recent ones suffice
def token_bag(text: str) -> TokenBag:
    """The token multiset of ``text`` (memoised; treat ``counts`` as read-only)."""
    tokens = plain_tokens(text)
    return TokenBag({token: count for token, count in Counter(tokens).items()}, len(tokens))


def common_count(a: TokenBag, b: TokenBag) -> int:
    """``|a ∩ b|``: tokens shared by the two multisets, each counted min(count in a, count in b) times."""
    small, large = (a.counts, b.counts) if len(a.counts) <= len(b.counts) else (b.counts, a.counts)
    get = large.get
    total = 0
    for token, count in small.items():
        other = get(token)
        if other:
            total += count if count < other else other
    return total


class Overlap(NamedTuple):
    """Token precision, recall and F1 of a prediction against a reference (or the best over references)."""

    precision: float
    recall: float
    f1: float


ZERO = Overlap(0.0, 0.0, 0.0)


def overlap(prediction: TokenBag, reference: TokenBag) -> Overlap:
    """Precision ``|p ∩ r| / |p|``, recall ``|p ∩ r| / |r|`` and their harmonic mean; all 0 without overlap."""
    same = common_count(prediction, reference)
    if same == 0:
        return ZERO
    precision, recall = same / prediction.size, same / reference.size
    return Overlap(precision, recall, 2 * precision * recall / (precision + recall))


def best_overlap(prediction: str, references: Sequence[str]) -> Overlap | None:
    """Each of precision, recall and F1 maximised separately over ``references``; None without references."""
    if not references:
        return None
    bag = token_bag(prediction)
    scores = [overlap(bag, token_bag(ref)) for ref in references]
    if len(scores) == 1:
        return scores[0]
    return Overlap(*(max(values) for values in zip(*scores)))


# -- ranking over ids (Unitxt RetrievalMetric) ---------------------------------------------------------------


def relevance_flags(retrieved: Sequence[str], relevant: Sequence[str]) -> list[bool]:
    """For each retrieved id in rank order: is it one of the relevant ids? (A repeated id is judged each time.)"""
    wanted = set(relevant)
    return [doc_id in wanted for doc_id in retrieved]


def reciprocal_rank(hits: Sequence[bool]) -> float:
    """Unitxt ``MRR``: ``1 / rank`` of the first relevant retrieved item (1-based), 0 when none is relevant.

    ``hits`` says, in rank order, whether each retrieved item is relevant (see :func:`relevance_flags`).
    """
    for rank, hit in enumerate(hits, start=1):
        if hit:
            return 1.0 / rank
    return 0.0


def average_precision(hits: Sequence[bool]) -> float:
    """Unitxt ``MAP``: mean of precision@k over the ranks k holding a relevant item, 0 when none does.

    ``AP = Σ_k rel_k · P@k / Σ_k rel_k`` over the retrieved list. The divisor is the number of relevant items
    *retrieved*, not the number of relevant ids (trec_eval's ``map`` divides by all relevant ids, so a relevant
    document never retrieved lowers it; here it does not).
    """
    found, total = 0, 0.0
    for rank, hit in enumerate(hits, start=1):
        if hit:
            found += 1
            total += found / rank
    return total / found if found else 0.0
