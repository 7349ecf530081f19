"""The quality-cost-latency frontier: latency decides only beyond its intervals (issue 38, item 11), and the cost
view judges quality by the same metric as the comparison's frontier, never a constant one (item 3)."""

from __future__ import annotations

import random

import pytest

from ragassay.analysis.comparison import compare
from ragassay.analysis.cost_view import cost_view
from ragassay.analysis.report import run_report
from ragassay.results import read_run

from written_runs import write_run


def _latencies(centre: float, seed: int, n: int = 200) -> list[float]:
    rng = random.Random(seed)
    return [centre * (1 + rng.uniform(-0.5, 0.5)) for _ in range(n)]


def _cells(correct: list[bool], latencies: list[float], exact: float = 0.0) -> list[dict]:
    return [
        {"metrics": {"exact_match": exact, "contains_answer": float(c)}, "judges": {"match": c}, "latency": t}
        for c, t in zip(correct, latencies)
    ]


@pytest.fixture
def read(tmp_path):
    stores = []

    def written(systems, **options):
        store, run_id = write_run(tmp_path / f"results{len(stores)}.db", systems, **options)
        stores.append(store)
        return read_run(store, run_id)

    yield written
    for store in stores:
        store.close()


def test_a_latency_difference_inside_the_intervals_dominates_no_one(read):
    same = [i % 4 != 0 for i in range(200)]
    # the case: equal quality, sub-millisecond latencies from one distribution, one median a hair lower
    run = read({"keyword": _cells(same, _latencies(0.0002, 1)), "bm25": _cells(same, _latencies(0.0002, 2))})
    part = compare([run]).runs[0]
    p50 = {s.system: s.at(0.5) for s in part.latency}
    assert p50["keyword"].value != p50["bm25"].value  # the point estimates differ...
    assert p50["keyword"].ci_low < p50["bm25"].ci_high and p50["bm25"].ci_low < p50["keyword"].ci_high  # ...not beyond
    assert part.frontier.systems == ["keyword", "bm25"]
    assert all(p.latency_ci is not None for p in part.frontier.points)


def test_a_latency_difference_beyond_the_intervals_decides(read):
    same = [i % 4 != 0 for i in range(200)]
    run = read({"fast": _cells(same, _latencies(0.01, 1)), "slow": _cells(same, _latencies(0.5, 2))})
    points = {p.system: p for p in compare([run]).runs[0].frontier.points}
    assert points["fast"].on_frontier and points["slow"].dominated_by == ["fast"]
    better = [True] * 200  # slower but better: both on the frontier
    run = read({"fast": _cells(same, _latencies(0.01, 1)), "slow": _cells(better, _latencies(0.5, 2))})
    assert compare([run]).runs[0].frontier.systems == ["fast", "slow"]


def test_the_cost_view_judges_quality_by_the_frontier_metric_not_a_constant_first_one(read):
    # exact_match comes first and is 0 everywhere (hidden by compare); contains_answer tells the systems apart
    worse, better = [i % 2 == 0 for i in range(200)], [i % 5 != 0 for i in range(200)]
    run = read({"a": _cells(worse, _latencies(0.01, 1)), "b": _cells(better, _latencies(0.01, 2))})
    view = cost_view(run)
    assert view.metric == "contains_answer"
    assert [r.quality for r in view.rows] == [pytest.approx(0.5), pytest.approx(0.8)]
    frontier = compare([run]).runs[0].frontier
    assert frontier.metric == view.metric and view.frontier.systems == frontier.systems == ["b"]
    report = run_report(run)
    assert report.cost.metric == report.comparison.runs[0].frontier.metric == "contains_answer"
    assert report.cost.frontier.systems == report.comparison.runs[0].frontier.systems
    assert cost_view(run, "exact_match").metric == "exact_match"  # asked for by name: as asked


def test_a_declared_decision_family_names_the_quality_metric(read):
    worse, better = [i % 2 == 0 for i in range(200)], [i % 5 != 0 for i in range(200)]
    config = {"evaluation": {"decide": ["judge:match"]}}
    run = read({"a": _cells(worse, _latencies(0.01, 1)), "b": _cells(better, _latencies(0.01, 2))}, config=config)
    assert cost_view(run).metric == compare([run]).runs[0].frontier.metric == "judge:match"
