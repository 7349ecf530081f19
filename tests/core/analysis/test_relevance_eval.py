"""Ranking fidelity: Kendall's tau of the systems' means under judged and people's values, with a seeded
bootstrap interval over queries; a sample qrels swap that leaves the rest of the sample as it was."""

from __future__ import annotations

import pytest

from ragassay.analysis.ppi import ppi_mean
from ragassay.analysis.relevance_eval import pair_verdict, ranking_fidelity, with_qrels
from ragassay.models import Sample

SYSTEMS = ["a", "b", "c", "d"]
QUERIES = [f"q{i}" for i in range(12)]


def values(means, spread=0.05):
    return {s: {q: m + spread * ((i * 7 + j * 3) % 5 - 2) for i, q in enumerate(QUERIES)}
            for j, (s, m) in enumerate(zip(SYSTEMS, means))}  # fmt: skip


def test_the_same_order_gives_tau_one_and_the_reverse_minus_one():
    human = values([0.9, 0.7, 0.5, 0.3])
    same = ranking_fidelity(SYSTEMS, values([0.8, 0.6, 0.4, 0.2]), human, QUERIES, resamples=200)
    assert same.tau == 1.0 and same.judge_order == same.human_order == SYSTEMS
    reverse = ranking_fidelity(SYSTEMS, values([0.2, 0.4, 0.6, 0.8]), human, QUERIES, resamples=200)
    assert reverse.tau == -1.0 and reverse.judge_order == SYSTEMS[::-1]


def test_one_swap_and_a_seeded_interval_around_it():
    judged, human = values([0.7, 0.72, 0.5, 0.3], spread=0.2), values([0.72, 0.7, 0.5, 0.3], spread=0.2)
    first = ranking_fidelity(SYSTEMS, judged, human, QUERIES, seed=3, resamples=500)
    assert first.tau == pytest.approx(4 / 6)  # one discordant pair of six
    assert -1.0 <= first.low <= first.tau <= first.high <= 1.0 and first.low < first.high
    assert ranking_fidelity(SYSTEMS, judged, human, QUERIES, seed=3, resamples=500) == first
    assert first.resamples + first.dropped == 500


def test_with_qrels_replaces_the_judgements_only():
    sample = Sample(
        question_id="q", question="x", reference_context_ids=["old"], metadata={"relevance": {"old": 1}, "k": 1}
    )
    swapped = with_qrels(sample, {"d1": 1, "d2": 3, "d3": 0})
    assert swapped.reference_context_ids == ["d2", "d1"]
    assert swapped.metadata == {"relevance": {"d1": 1, "d2": 3, "d3": 0}, "k": 1} and sample.metadata["relevance"] == {
        "old": 1
    }


def test_no_verdict_from_a_zero_width_interval():
    flat = ppi_mean([0.4, 0.4, 0.4], [0.3, 0.5, 0.4], [0.2, 0.6, 0.4])  # lambda 0: the labels alone, constant
    assert flat.std_error < 1e-15 and flat.p_value < 0.05  # rounding leaves a tiny error and a "significant" p
    assert pair_verdict(flat) == "no spread"
    spread = ppi_mean([0.1, -0.2, 0.3, -0.2], [0.1, -0.1, 0.2, -0.2], [0.1, -0.2, 0.1])
    assert spread.low < 0 < spread.high and pair_verdict(spread) == "inconclusive"
    shifted = ppi_mean([1.1, 0.8, 1.3, 0.8], [1.1, 0.9, 1.2, 0.8], [1.1, 0.8, 1.1])
    assert shifted.low > 0 and pair_verdict(shifted) == "a better"
