"""What a label judged, as a digest: the answer text it was given for (a pairwise label: both answers), so a label
is reused on another run only where that run's answers are the same text (:mod:`ragassay.labels.reuse`).

The digest is 32 hex characters of the sha256 of the answers as a JSON list, in the item's order: the one answer
of a binary or ordinal label, or for a pairwise label the two systems' answers in the order of the systems' names
(the order a pair was shown in does not change it). Only the answers count: the same sample id answered with the
same text is the same item, whatever the retrieved contexts were.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

DIGEST_CHARS = 32


def answers_digest(answers: Sequence[str | None]) -> str:
    """The digest of ``answers`` in the item's order (see the module docstring); a missing answer is ``null``."""
    raw = json.dumps(list(answers), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:DIGEST_CHARS]


def item_systems(system: str | None, systems: Sequence[str] | None) -> list[str]:
    """The systems of an item in the digest's order: the one system, or the pair in name order."""
    return [system] if system is not None else sorted(systems or ())


def label_digest(label, answer_of: Callable[[str, str], str | None]) -> str:
    """The digest of the answers ``label`` is about, as ``answer_of(system, sample_id)`` gives them now."""
    names = item_systems(label.system, label.systems)
    return answers_digest([answer_of(name, label.sample_id) for name in names])
