"""``ppi_mean`` on RAGChecker's meta-evaluation data (tests/ragchecker_meta_coverage.py; the full table is
``benchmarks/ragchecker_meta_ppi.py``'s, in docs/statistics.md): over 1,000 random labelled subsets, the
prediction-powered interval of "model2 preferred to model1" covers the all-labels preference at least at the
nominal 95% (within Monte Carlo error) and is narrower than the labels-only interval at the same labels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragchecker_meta import instances
from ragchecker_meta_coverage import comparisons, coverage, labelled_count, study

DRAWS = 1000
NOMINAL = 0.95
SLACK = 3 * math.sqrt(NOMINAL * (1 - NOMINAL) / DRAWS)  # three Monte Carlo standard errors


@pytest.fixture(scope="module")
def items():
    return instances()


def test_the_pooled_target_is_the_mean_of_all_560_labels(items):
    pooled, pairs = comparisons(items, "overall")
    positions = pooled[0]
    assert positions.name == "model2 over model1" and len(positions.truth) == 280
    every = [label["overall"] for item in items for label in item["labels"]]
    assert len(every) == 560 and positions.target == pytest.approx(sum(every) / 560, abs=1e-12)
    first = items[0]
    # RAGChecker's F1 difference (-1..1) on the preference scale (-2..2), as compare --labelled maps it
    assert positions.judged[0] == 2 * (first["model2"]["ragchecker"]["f1"] - first["model1"]["ragchecker"]["f1"])
    assert len(pairs) == 28 and all(len(pair.truth) == 10 for pair in pairs)  # each of the 28 pairs, 10 instances


def test_a_pair_is_read_as_the_later_name_over_the_earlier_whichever_was_shown_first(items):
    _, pairs = comparisons(items, "overall")
    pair = next(p for p in pairs if p.name == "bm25_llama3_8b over bm25_gpt_4")
    shown = [i for i in items if {i["model1"]["name"], i["model2"]["name"]} == {"bm25_gpt_4", "bm25_llama3_8b"}]
    expected = [
        (np.mean([x["overall"] for x in i["labels"]]) * (1 if i["model2"]["name"] == "bm25_llama3_8b" else -1))
        for i in shown
    ]
    assert {i["model2"]["name"] for i in shown} == {"bm25_gpt_4", "bm25_llama3_8b"}  # both orders occur
    assert pair.truth.tolist() == pytest.approx(expected)


def test_ppi_covers_the_all_labels_preference_and_is_narrower_than_the_labels_alone(items):
    pooled, _ = study(items, aspects=["overall"], draws=DRAWS, seed=0)
    positions = [row for row in pooled if row.comparison == "model2 over model1"]
    assert [row.labelled for row in positions] == [28, 70, 140]
    for row in positions:
        assert row.ppi_coverage >= NOMINAL - SLACK, row
        assert row.ppi_width < row.labels_width, row
    assert positions[0].ppi_width < 0.9 * positions[0].labels_width  # RAGChecker (Pearson 0.62) narrows it


def test_the_same_seed_gives_the_same_coverage_and_another_seed_other_draws(items):
    pooled, _ = comparisons(items, "overall")
    once = coverage(pooled[1], "overall", 0.25, 200, seed=7)
    assert coverage(pooled[1], "overall", 0.25, 200, seed=7) == once
    assert coverage(pooled[1], "overall", 0.25, 200, seed=8) != once


def test_labelled_count_keeps_two_labelled_and_two_unlabelled():
    assert [labelled_count(10, f) for f in (0.1, 0.25, 0.5, 0.9)] == [2, 2, 5, 8]
    assert labelled_count(280, 0.1) == 28
