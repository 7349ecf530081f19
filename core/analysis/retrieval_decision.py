"""Scoring the retrieve-or-not decision of an agent RAG (boolean-agent RAG, seeds/003 section V).

The label "retrieval was needed" for a sample is: the no-retrieval baseline answered it incorrectly. The
agent's decision is its output's ``retrieved`` flag. With "retrieved" as the positive class:

- precision = retrieved and needed / retrieved
- recall = retrieved and needed / needed
- accuracy = decisions matching the label / samples

plus the tokens the agent saved against naive RAG (input + output, summed over the samples both answered)
and the quality lost where it chose not to retrieve (naive correctness minus agent correctness on those
samples). Only samples that all three systems answered, and that have a correctness value, are counted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping


@dataclasses.dataclass
class DecisionOutcome:
    """What one system did for one sample: correct (or None if unknown), retrieved, tokens used."""

    correct: float | None
    retrieved: bool | None
    tokens: int


@dataclasses.dataclass
class DecisionReport:
    """Decision quality of ``agent`` against the labels from ``baseline``, and its cost against ``naive``."""

    agent: str
    baseline: str
    naive: str
    samples: int
    needed: int
    retrieved: int
    true_positive: int
    precision: float | None
    recall: float | None
    accuracy: float | None
    naive_tokens: int
    agent_tokens: int
    skipped: int  # samples where the agent did not retrieve
    quality_lost_when_skipped: float | None  # naive minus agent mean correctness on those samples

    @property
    def tokens_saved(self) -> int:
        return self.naive_tokens - self.agent_tokens

    @property
    def tokens_saved_share(self) -> float | None:
        return self.tokens_saved / self.naive_tokens if self.naive_tokens else None


def score_decisions(
    agent: Mapping[str, DecisionOutcome],
    baseline: Mapping[str, DecisionOutcome],
    naive: Mapping[str, DecisionOutcome],
    names: tuple[str, str, str],
) -> DecisionReport:
    """Compare the agent's decisions with "the baseline got it wrong" on the samples all three answered."""
    ids = [
        q
        for q in agent
        if q in baseline and q in naive and agent[q].retrieved is not None and baseline[q].correct is not None
    ]
    needed = {q for q in ids if baseline[q].correct < 0.5}
    retrieved = {q for q in ids if agent[q].retrieved}
    true_positive = len(needed & retrieved)
    matches = sum((q in needed) == (q in retrieved) for q in ids)
    skipped = [
        q for q in ids if not agent[q].retrieved and agent[q].correct is not None and naive[q].correct is not None
    ]
    lost = (sum(naive[q].correct - agent[q].correct for q in skipped) / len(skipped)) if skipped else None
    return DecisionReport(
        agent=names[0],
        baseline=names[1],
        naive=names[2],
        samples=len(ids),
        needed=len(needed),
        retrieved=len(retrieved),
        true_positive=true_positive,
        precision=true_positive / len(retrieved) if retrieved else None,
        recall=true_positive / len(needed) if needed else None,
        accuracy=matches / len(ids) if ids else None,
        naive_tokens=sum(naive[q].tokens for q in ids),
        agent_tokens=sum(agent[q].tokens for q in ids),
        skipped=len([q for q in ids if not agent[q].retrieved]),
        quality_lost_when_skipped=lost,
    )
