"""The anytime-valid prediction-powered sequence (:mod:`ragassay.analysis.ppi_sequential`): a seeded simulation
of 1,000 labelled streams in which the confidence sequence holds the true difference at every prefix at once,
while the fixed-n PPI interval looked at after every prefix does not; and the terms, bound and decision."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from ragassay.analysis.ppi import ppi_active_mean
from ragassay.analysis.ppi_sequential import (
    ACTIVE,
    RANDOM,
    Stream,
    decide_stream,
    term_bound,
    terms,
)
from ragassay.analysis.sequential import bounds, covers, settle

STREAMS, ITEMS, PI, ALPHA = 1000, 400, 0.25, 0.05
P_A, P_B = 0.60, 0.70  # people's rates: the true difference is +0.10
TRUTH = P_B - P_A
SLACK = 3 * np.sqrt(ALPHA * (1 - ALPHA) / STREAMS)  # three Monte Carlo standard errors


def world(seed: int = 0):
    """STREAMS x ITEMS paired samples drawn independently: people's 0/1 labels of A and B, and a judge that misses
    30% of A's correct answers but 5% of B's (10% false alarms for both): its difference is biased upwards."""
    rng = np.random.default_rng(seed)
    y_a = (rng.random((STREAMS, ITEMS)) < P_A) * 1.0
    y_b = (rng.random((STREAMS, ITEMS)) < P_B) * 1.0

    def judge(y, miss):
        u = rng.random(y.shape)
        return np.where(y == 1, (u >= miss) * 1.0, (u < 0.1) * 1.0)

    return rng, judge(y_b, 0.05) - judge(y_a, 0.30), y_b - y_a


def labelled_by(rng, design: str, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which samples are labelled and with which probability: independent coins at PI ("bernoulli"), a uniform
    subset of exactly PI * ITEMS per stream taken at pi = n / N ("subset", a random-order queue), or coins at
    0.5 where the judge's two scores differ and 0.15 where they agree ("active", pi from the judge only)."""
    if design == "bernoulli":
        return rng.random(f.shape) < PI, np.full(f.shape, PI)
    if design == "subset":
        n = int(PI * ITEMS)
        chosen = np.argsort(rng.random(f.shape), axis=1)[:, :n]
        xi = np.zeros(f.shape, bool)
        np.put_along_axis(xi, chosen, True, axis=1)
        return xi, np.full(f.shape, n / ITEMS)
    pi = np.where(f != 0, 0.5, 0.15)
    return rng.random(f.shape) < pi, pi


def fixed_n_covers(phi: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """The fixed-n interval of the same terms (the active PPI estimate at lambda 1: mean +- z sd / sqrt(t)) after
    every prefix t holding at least 10 labels: does it hold the truth there? (rows, ITEMS) booleans."""
    t = np.arange(1, ITEMS + 1)
    mean = np.cumsum(phi, axis=1) / t
    var = (np.cumsum(phi**2, axis=1) - t * mean**2) / np.maximum(t - 1, 1)
    half = NormalDist().inv_cdf(1 - ALPHA / 2) * np.sqrt(var / t)
    return (np.abs(mean - TRUTH) <= half) | (np.cumsum(xi, axis=1) < 10)


@pytest.mark.parametrize("design", ["bernoulli", "subset", "active"])
def test_the_sequence_covers_at_every_prefix_and_peeking_at_fixed_n_does_not(design):
    rng, f, y = world()
    xi, pi = labelled_by(rng, design, f)
    phi = terms(f, np.where(xi, y, np.nan), pi)
    width = term_bound(1.0, float(pi[xi].min()))
    assert np.abs(phi).max() <= width
    every = covers(phi, width, ALPHA, TRUTH).all(axis=1).mean()
    peeking = fixed_n_covers(phi, xi)
    assert every >= 1 - ALPHA - SLACK, every  # anytime-valid: every prefix at once
    assert peeking[:, -1].mean() >= 1 - ALPHA - SLACK  # one look at the end is fine ...
    assert peeking.all(axis=1).mean() < 1 - ALPHA - 5 * SLACK  # ... looking after every prefix is not


def test_the_fixed_n_interval_of_the_simulation_is_the_active_ppi_estimate():
    rng, f, y = world(1)
    xi, pi = labelled_by(rng, "bernoulli", f)
    row, t = 3, 120
    phi = terms(f[row, :t], np.where(xi[row, :t], y[row, :t], np.nan), pi[row, :t])
    truth = [float(v) if x else None for v, x in zip(y[row, :t], xi[row, :t])]
    want = ppi_active_mean(list(f[row, :t]), truth, list(pi[row, :t]), lam=1.0, confidence=1 - ALPHA)
    half = NormalDist().inv_cdf(1 - ALPHA / 2) * phi.std(ddof=1) / np.sqrt(t)
    assert phi.mean() == pytest.approx(want.estimate) and half == pytest.approx(want.high - want.estimate)


def test_terms_and_bound():
    f, y, pi = np.array([1.0, -1.0, 0.0, np.nan]), np.array([np.nan, 1.0, 0.0, 1.0]), np.array([0.5, 0.25, 1, 1])
    phi = terms(f, y, pi)
    assert phi[0] == 1.0 and phi[1] == pytest.approx(-1 + (1 - -1) / 0.25) and phi[2] == 0.0 and np.isnan(phi[3])
    assert term_bound(1.0, 0.25) == pytest.approx(7.0) and term_bound(1.0, 0.25, lam=0.0) == pytest.approx(4.0)
    assert phi[1] == pytest.approx(term_bound(1.0, 0.25))  # the bound is reached: y = 1, f = -1


def test_decide_stream_is_the_sequence_of_sequential_py_on_the_terms():
    rng = np.random.default_rng(5)
    n = 300
    y = ((rng.random(n) < 0.9) * 1.0) - ((rng.random(n) < 0.3) * 1.0)
    f = np.clip(y + rng.normal(0, 0.3, n), -1, 1)
    xi = rng.random(n) < 0.5
    stream = Stream(f, np.where(xi, y, np.nan), np.where(xi, 0.5, np.nan), 1.0, RANDOM)
    found = decide_stream(stream, ALPHA)
    phi = terms(f, np.where(xi, y, np.nan), np.full(n, 0.5))
    width = term_bound(1.0, 0.5)
    assert (found.ci_low, found.ci_high) == pytest.approx(bounds(phi, width, ALPHA, n))
    paths = settle(phi, width, ALPHA, 1)
    assert found.decision == "better" and found.settled_at == int(paths.settled_at[0]) < n
    assert found.labels_at == int(xi[: found.settled_at].sum()) and found.labelled == int(xi.sum())
    assert found.ci_low > 0 and found.bound == width and found.design == RANDOM


def test_an_active_stream_takes_its_smallest_probability_for_the_bound():
    f = np.array([0.0, 1.0, 0.0, 1.0])
    stream = Stream(f, np.array([1.0, np.nan, 0.0, 1.0]), np.array([0.2, np.nan, 0.5, 0.8]), 1.0, ACTIVE)
    found = decide_stream(stream, ALPHA)
    assert found.pi_min == 0.2 and found.bound == pytest.approx(term_bound(1.0, 0.2))
    assert found.decision == "not settled" and found.settled_at == 4 and found.labels_at == 3
