"""Paired bootstrap comparison."""

from __future__ import annotations

import pytest

from ragassay.analysis.paired import paired_difference


def test_a_consistent_improvement_is_significant():
    a = {f"q{i}": 0.0 for i in range(40)}
    b = {f"q{i}": (1.0 if i % 4 else 0.0) for i in range(40)}  # better on 30 of 40
    result = paired_difference("em", a, b)
    assert result.n == 40 and result.mean_diff == pytest.approx(0.75)
    assert (result.wins, result.ties, result.losses) == (30, 10, 0)
    assert 0.55 < result.ci_low < 0.75 < result.ci_high <= 0.9 and result.significant


def test_noise_is_not_significant_and_only_shared_samples_count():
    a = {f"q{i}": float(i % 2) for i in range(20)}
    b = {f"q{i}": float((i + 1) % 2) for i in range(20)}
    b["extra"] = 1.0
    result = paired_difference("em", a, b)
    assert result.n == 20 and result.mean_diff == 0.0 and not result.significant
    assert result.ci_low < 0 < result.ci_high and (result.wins, result.losses) == (10, 10)


def test_no_shared_samples():
    result = paired_difference("em", {"a": 1.0}, {"b": 1.0})
    assert result.n == 0 and result.mean_diff is None and not result.significant


def test_seeded_and_reproducible():
    a = {f"q{i}": (i * 37 % 11) / 10 for i in range(30)}
    b = {f"q{i}": (i * 17 % 13) / 12 for i in range(30)}
    assert paired_difference("m", a, b) == paired_difference("m", a, b)
