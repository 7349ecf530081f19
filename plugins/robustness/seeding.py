"""Stable seeds: the same random numbers for a (seed, sample, operator) in every process.

Python's ``hash()`` of a string changes with ``PYTHONHASHSEED``; these seeds come from blake2b instead.
"""

from __future__ import annotations

import hashlib
import random


def stable_seed(*parts: object) -> int:
    """A 64-bit integer from ``parts`` (their ``str``), the same in every process and Python version."""
    digest = hashlib.blake2b("\x1f".join(str(p) for p in parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def sample_rng(seed: int, question_id: str, operator: str) -> random.Random:
    """The random generator of one operator on one sample: seeded by the run's ``seed``, the sample's
    ``question_id`` and the operator name, so that samples draw independently and reruns draw the same."""
    return random.Random(stable_seed(seed, question_id, operator))
