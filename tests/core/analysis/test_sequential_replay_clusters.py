"""Stopping early on turns of conversations: the conversation is the sequential unit (it enters once its last
turn is processed, with its mean gain), and with every sample its own cluster nothing changes."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.analysis.sequential import BETTER
from ragassay.analysis.sequential_replay import (
    Comparison,
    SequentialSettings,
    check,
    conversation_ends,
    conversation_gains,
    replay,
)

COMPARISON = [Comparison("b", "a", "m", 0.0, 1.0)]


def test_conversation_gains_sit_at_the_last_turn():
    clusters = ["x", "y", "x", "z", "y", "x"]
    ends = conversation_ends(clusters)
    assert list(ends) == [5, 4, 5, 3, 4, 5]
    gains = np.array([1.0, 0.0, 0.5, np.nan, -1.0, np.nan])
    out = conversation_gains(gains, ends)
    assert np.isnan(out[[0, 1, 2]]).all()
    assert np.isnan(out[3])  # z: no scored turn
    assert out[4] == pytest.approx(-0.5) and out[5] == pytest.approx(0.75)
    assert conversation_ends([f"q{i}" for i in range(4)]) is None


def values(n, seed):
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.5).astype(float)
    b = (rng.random(n) < 0.8).astype(float)
    return {"a": {"m": a}, "b": {"m": b}}


def test_singletons_replay_exactly_as_independent_samples():
    data = values(300, 1)
    settings = SequentialSettings(batch=20)
    ids = [f"q{i}" for i in range(300)]
    plain = replay(data, COMPARISON, settings, seed=3, question_ids=ids)
    labelled = replay(data, COMPARISON, settings, seed=3, question_ids=ids, clusters=ids)
    assert plain == labelled and not plain.settled[0].clustered


def test_conversations_are_the_unit_of_the_sequence():
    data = values(300, 2)
    clusters = [f"c{i // 5}" for i in range(300)]  # 60 conversations of 5 turns
    settings = SequentialSettings(batch=20)
    (settled,) = check(data, COMPARISON, settings, seen=300, clusters=clusters)
    assert settled.clustered and settled.decision == BETTER
    gains = data["b"]["m"] - data["a"]["m"]
    per_conversation = gains.reshape(60, 5).mean(axis=1)
    complete = settled.settled_at // 5  # conversations wholly processed by then (dataset order here)
    assert settled.n == complete
    assert settled.mean == pytest.approx(per_conversation[:complete].mean())
    (turns,) = check(data, COMPARISON, settings, seen=300)
    assert turns.n == turns.settled_at  # the same values read as independent samples count turns


def test_a_live_check_counts_only_finished_conversations():
    data = values(40, 3)
    clusters = ["c0"] * 10 + [f"s{i}" for i in range(20)] + ["c0"] * 10  # c0 finishes at the last sample
    seen = 30
    cut = {s: {m: np.where(np.arange(40) < seen, v, np.nan) for m, v in d.items()} for s, d in data.items()}
    (settled,) = check(cut, COMPARISON, SequentialSettings(batch=10), seen=seen, clusters=clusters)
    assert settled.n == 20  # the singletons; c0 is not finished
