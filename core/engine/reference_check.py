"""Checking a dataset's reference context ids against the corpus before any work starts.

A reference id that matches no corpus document turns every retrieval metric into a silent 0: the relevant
document can never be retrieved. So: no reference id matches at all, a configuration error that shows
examples of both kinds of id and how corpus ids are formed; some do not match, a warning with counts (stored
with the run). A reference id matches a document id, or a chunk of it (``<document id>#<n>``).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence

from ..errors import ConfigError
from ..models import Document, Sample

HOW_IDS_ARE_FORMED = (
    "Corpus document ids come from the corpus source: a .md/.txt file under [corpus] paths has its path relative "
    "to the config's folder (e.g. 'corpus/library-cards.md'); a .jsonl/.json record its 'id' (else '_id', else "
    "'url', else 'title'). Write reference_context_ids the same way."
)


@dataclasses.dataclass
class ReferenceCheck:
    """How the dataset's reference context ids relate to the corpus ids."""

    reference_ids: int  # distinct reference ids in the dataset
    unmatched: list[str]  # distinct reference ids that match no document, sorted
    samples_with_unmatched: int

    @property
    def matched(self) -> int:
        return self.reference_ids - len(self.unmatched)


def check_reference_ids(
    samples: Iterable[Sample], documents: Iterable[Document], referenced: set[str] | None = None
) -> ReferenceCheck:
    """Compare every sample's ``reference_context_ids`` with the document ids (pure).

    ``referenced``: the distinct reference ids, when collected while the samples were read; ``samples`` is then
    read again only when some id matches no document (to count the samples that hold one), so a re-iterable
    stream of samples is never held in memory.
    """
    doc_ids = {doc.id for doc in documents}
    if referenced is None:
        samples = list(samples)
        referenced = {rid for sample in samples for rid in sample.reference_context_ids}
    unmatched = sorted(rid for rid in referenced if not _matches(rid, doc_ids))
    missing = set(unmatched)
    samples_with = sum(1 for sample in samples if missing.intersection(sample.reference_context_ids)) if missing else 0
    return ReferenceCheck(len(referenced), unmatched, samples_with)


def _matches(reference_id: str, doc_ids: set[str]) -> bool:
    return reference_id in doc_ids or reference_id.rsplit("#", 1)[0] in doc_ids


def reference_warnings(
    samples: Iterable[Sample], documents: Sequence[Document], where: str, referenced: set[str] | None = None
) -> list[str]:
    """Warnings for partly unmatched reference ids; raises :class:`ConfigError` when none matches.

    Nothing is checked when the corpus has no text (a system that brings its own contexts) or no sample has
    reference ids. ``referenced``: as for :func:`check_reference_ids`.
    """
    if not any(doc.text.strip() for doc in documents):
        return []  # no corpus to retrieve from (or an empty one, which the system reports itself)
    check = check_reference_ids(samples, documents, referenced)
    if not check.reference_ids or not check.unmatched:
        return []
    doc_ids = sorted(doc.id for doc in documents)
    if check.matched == 0:
        examples = ", ".join(repr(rid) for rid in check.unmatched[:2])
        corpus = ", ".join(repr(did) for did in doc_ids[:2])
        raise ConfigError(
            f"{where}: none of the dataset's {check.reference_ids} reference context ids matches a corpus document "
            f"id, so every retrieval metric would be 0. Dataset ids: {examples}; corpus ids: {corpus}"
            f"{_hint(check.unmatched[0], doc_ids)}. {HOW_IDS_ARE_FORMED}"
        )
    examples = ", ".join(repr(rid) for rid in check.unmatched[:3])
    return [
        f"{where}: {len(check.unmatched)} of {check.reference_ids} reference context ids (in "
        f"{check.samples_with_unmatched} samples) match no corpus document, e.g. {examples}"
        f"{_hint(check.unmatched[0], doc_ids)}; retrieval metrics count them as relevant documents that can "
        "never be retrieved"
    ]


def _hint(reference_id: str, doc_ids: list[str]) -> str:
    """' (did you mean ...?)' when a corpus id contains the reference id or is close to it."""
    containing = [did for did in doc_ids if reference_id and reference_id in did]
    close = containing[:1] or difflib.get_close_matches(reference_id, doc_ids, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
