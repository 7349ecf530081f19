"""Run-to-run spread (ragassay.analysis.variance): the formulas of its docstring on hand-computed data."""

from __future__ import annotations

import math

from ragassay.analysis.variance import separation, spread, spreads


def test_spread_over_samples_scored_in_every_repeat():
    values = {("a", 0): 1.0, ("b", 0): 0.0, ("a", 1): 1.0, ("b", 1): 1.0, ("c", 0): 1.0, ("c", 1): None}
    s = spread("sys", "m", values)  # c is unscored in repeat 1: left out of both repeats
    assert (s.repeats, s.n, s.means) == (2, 2, (0.5, 1.0))
    assert (s.mean, s.low, s.high, s.range) == (0.75, 0.5, 1.0, 0.5)
    assert math.isclose(s.sd, math.sqrt(((0.5 - 0.75) ** 2 + (1.0 - 0.75) ** 2) / 1))


def test_blog_five_runs_88_to_92():
    means = [0.88, 0.90, 0.92, 0.89, 0.91]
    values = {("q", r): m for r, m in enumerate(means)}
    s = spread("sys", "groundedness", values)
    assert (s.low, s.high) == (0.88, 0.92) and math.isclose(s.mean, 0.90)
    assert math.isclose(s.sd, math.sqrt(sum((m - 0.90) ** 2 for m in means) / 4))


def test_difference_exceeds_spread_only_when_ranges_do_not_overlap():
    a = spread("a", "m", {("q", 0): 0.88, ("q", 1): 0.92})
    close = spread("b", "m", {("q", 0): 0.91, ("q", 1): 0.95})
    far = spread("c", "m", {("q", 0): 0.95, ("q", 1): 0.97})
    within = separation(a, close)
    assert math.isclose(within.difference, 0.03) and math.isclose(within.spread, 0.04) and not within.exceeds
    assert separation(a, far).exceeds and separation(far, a).exceeds


def test_no_common_sample_and_single_repeat():
    empty = spread("a", "m", {("q", 0): None, ("q", 1): 1.0})
    assert (empty.n, empty.mean, empty.sd) == (0, None, None)
    assert separation(empty, empty).exceeds is False and separation(empty, empty).difference is None
    assert spread("a", "m", {("q", 0): 1.0}).sd is None


def test_spreads_keeps_only_repeated_labels():
    rows = [
        {"system": "s", "question_id": "q", "label": "judge:j", "repeat": r, "value": float(r % 2)} for r in range(3)
    ] + [{"system": "s", "question_id": "q", "label": "once", "repeat": 0, "value": 1.0}]
    found = spreads(rows)
    assert list(found) == [("s", "judge:j")] and found[("s", "judge:j")].means == (0.0, 1.0, 0.0)
