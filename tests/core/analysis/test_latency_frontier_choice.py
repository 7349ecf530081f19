"""``[evaluation] frontier`` (issue 40, Decisions): the frontier compares the chosen latency quantile and cost.

The planted run: equal quality; ``single`` answers with a priced model (gpt-4o-mini: $0.15 / $0.60 per million
input / output tokens) in 100 tokens, ``decompose`` with a free local model in 400 tokens; latencies 1.00, 1.01,
..., 1.39 s for single, the same for decompose but its slowest fifth at 10 s. So the medians are equal (both
1.195 s) while the p95s are 1.3705 s and 10 s; dollars favour decompose, tokens favour single:

=================  ======================  ================
frontier           latency                 on the frontier
=================  ======================  ================
dollars, p50       tie                     decompose
dollars, p95       single faster           both
tokens, p50        tie                     single
tokens, p95        single faster           single
=================  ======================  ================
"""

from __future__ import annotations

import pytest

from ragassay.analysis.comparison import compare
from ragassay.analysis.cost_view import cost_view
from ragassay.analysis.report import run_report
from ragassay.config.frontier_options import FrontierSettings
from ragassay.results import read_run

from written_runs import write_run

N = 40
SINGLE_DOLLARS = (80 * 0.15 + 20 * 0.60) / 1e6  # gpt-4o-mini, per answer


def _latencies(slow_tail: bool) -> list[float]:
    values = [1.0 + 0.01 * i for i in range(N)]
    return [10.0 if slow_tail and i >= N - N // 5 else t for i, t in enumerate(values)]


def _cells(usage: tuple, slow_tail: bool) -> list[dict]:
    return [{"metrics": {"recall": 0.5}, "usage": usage, "latency": t} for t in _latencies(slow_tail)]


@pytest.fixture
def read(tmp_path):
    stores = []

    def written(frontier: dict | None = None, decompose_model: str = "local/qwen"):
        config = {"evaluation": {"frontier": frontier}} if frontier is not None else {}
        systems = {
            "single": _cells((80, 20, "openai/gpt-4o-mini"), slow_tail=False),
            "decompose": _cells((300, 100, decompose_model), slow_tail=True),
        }
        store, run_id = write_run(tmp_path / f"results{len(stores)}.db", systems, config=config)
        stores.append(store)
        return read_run(store, run_id)

    yield written
    for store in stores:
        store.close()


def _frontier(run, settings=None):
    return compare([run], frontier=settings).runs[0].frontier


def test_the_default_frontier_is_dollars_and_the_median(read):
    found = _frontier(read())
    assert (found.latency, found.cost, found.dimensions) == ("p50", "dollars", ["quality", "cost", "latency"])
    points = {p.system: p for p in found.points}
    assert (
        points["single"].cost_per_answer == pytest.approx(SINGLE_DOLLARS) and points["decompose"].cost_per_answer == 0
    )
    assert points["single"].latency == pytest.approx(1.195) and points["decompose"].latency == pytest.approx(1.195)
    assert found.systems == ["decompose"] and points["single"].dominated_by == ["decompose"]
    assert found.basis() == (
        "not dominated on recall (higher is better), cost per answer in dollars and p50 latency (apart only when "
        "the 95% intervals are disjoint)"
    )


def test_p95_latency_and_tokens_give_another_frontier(read):
    run = read({"latency": "p95", "cost": "tokens"})  # stored with the run: compare reads it
    found = _frontier(run)
    assert (found.latency, found.cost) == ("p95", "tokens")
    points = {p.system: p for p in found.points}
    assert (points["single"].cost_per_answer, points["decompose"].cost_per_answer) == (100.0, 400.0)
    assert points["single"].latency == pytest.approx(1.3705) and points["decompose"].latency == 10.0
    assert points["single"].latency_ci[1] < points["decompose"].latency_ci[0]  # disjoint: single is faster
    assert found.systems == ["single"] and points["decompose"].dominated_by == ["single"]
    assert "tokens per answer and p95 latency" in found.basis()


@pytest.mark.parametrize(
    ("latency", "cost", "systems"),
    [("p50", "dollars", ["decompose"]), ("p95", "dollars", ["single", "decompose"]), ("p50", "tokens", ["single"])],
)
def test_each_choice_changes_only_its_dimension(read, latency, cost, systems):
    run = read()
    assert _frontier(run, FrontierSettings(latency=latency, cost=cost)).systems == systems


def test_the_cost_view_and_the_report_use_the_stored_choice(read):
    run = read({"latency": "p95", "cost": "tokens"})
    view = cost_view(run)
    assert (view.frontier.latency, view.frontier.cost, view.frontier.systems) == ("p95", "tokens", ["single"])
    report = run_report(run)
    assert report.cost.frontier.systems == report.comparison.runs[0].frontier.systems == ["single"]
    assert cost_view(run, settings=FrontierSettings()).frontier.systems == ["decompose"]  # asked for: as asked


def test_unknown_dollars_leave_cost_out_but_tokens_are_always_known(read):
    run = read(decompose_model="acme/unpriced-model")
    found = _frontier(run)
    assert found.dimensions == ["quality", "latency"] and found.notes == ["cost left out: unknown for decompose"]
    assert found.systems == ["single", "decompose"]  # equal quality, tied medians: no one dominates
    by_tokens = _frontier(run, FrontierSettings(cost="tokens"))
    assert by_tokens.dimensions == ["quality", "cost", "latency"] and by_tokens.notes == []
    assert by_tokens.systems == ["single"]
