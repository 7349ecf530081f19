"""The trajectory analysis on a hand-built agents run in a real SQLite store (tests/trajectory_runs.py): steps per
trajectory by kind, the cost of the hops, the paired extra cost over the single-shot system, exact against the
planted table; intervals resample the conversation's two turns together."""

from __future__ import annotations

import pytest
from pytest import approx

from ragassay.analysis.clustered import cluster_mean_ci, clusters_of
from ragassay.analysis.trajectories import (
    estimate,
    extra_costs,
    hop_costs,
    single_shot_system,
    step_counts,
    trajectories_of,
)
from ragassay.analysis.trajectories_report import may_have_trajectories, trajectory_report
from ragassay.results import read_run

from trajectory_runs import write_trajectory_run
from written_runs import write_run

CLUSTERS = ["q1", "q2", "q3", "q4", "c1", "c1"]  # the conversation's two turns are one cluster


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store, run_id = write_trajectory_run(tmp_path_factory.mktemp("trajectories") / "results.db")
    try:
        yield read_run(store, run_id, payloads=True)
    finally:
        store.close()


@pytest.fixture(scope="module")
def trajectories(run):
    return trajectories_of(run)


def test_the_trajectories_of_the_ok_outputs(run, trajectories):
    assert sorted(trajectories) == sorted(
        [("decompose", q) for q in run.question_ids] + [("iterate", q) for q in ("q1", "q2", "q3", "q4", "c1::1")]
    )  # single has none; iterate's c1::2 failed
    assert [s.id for s in trajectories[("iterate", "q1")]] == [f"s{i}" for i in range(1, 8)]
    assert trajectories[("iterate", "q1")][3].parent_id == "s3"


def test_trajectories_need_payloads(tmp_path):
    store, run_id = write_trajectory_run(tmp_path / "plain.db")
    try:
        with pytest.raises(ValueError, match="payloads=True"):
            trajectories_of(read_run(store, run_id))
    finally:
        store.close()


def test_steps_per_trajectory_by_kind(run, trajectories):
    decompose, iterate = step_counts(run, trajectories, n_resamples=200)
    assert (decompose.system, decompose.trajectories, decompose.nested) == ("decompose", 6, 0)
    assert {k: e.value for k, e in decompose.per_kind.items()} == {"model_call": 2.0, "retrieval": 2.0, "answer": 1.0}
    assert decompose.total.value == 5.0 and (decompose.total.n, decompose.total.clusters) == (6, 5)
    assert decompose.per_kind["answer"].reason == "every scored instance has the same value"
    assert (iterate.trajectories, iterate.nested) == (5, 1)
    assert {k: e.value for k, e in iterate.per_kind.items()} == approx(
        {"model_call": 1.6, "retrieval": 1.6, "tool_call": 0.4, "answer": 1.0, "agent": 0.2}
    )
    assert list(iterate.per_kind) == ["model_call", "retrieval", "tool_call", "answer", "agent"]
    assert iterate.total.value == approx(4.8)


def test_the_cost_of_the_hops(run, trajectories):
    single, decompose, iterate = hop_costs(run, trajectories, n_resamples=200)
    assert (single.outputs, single.trajectories, single.retrieval_steps.value) == (6, 0, 1.0)
    assert (single.tokens.value, single.latency_s.value) == approx((120.0, 1.0))
    assert (single.tokens_per_retrieval, single.latency_per_retrieval) == approx((120.0, 1.0))
    assert decompose.tokens.value == approx(1880 / 6)  # q4's output reports no usage: its steps' 80 + 120
    assert (decompose.retrieval_steps.value, decompose.latency_s.value) == approx((2.0, 2.2))
    assert (decompose.tokens_per_retrieval, decompose.latency_per_retrieval) == approx((1880 / 12, 13.2 / 12))
    assert (iterate.outputs, iterate.tokens.value, iterate.retrieval_steps.value) == (5, approx(410.0), approx(1.6))
    assert (iterate.tokens_per_retrieval, iterate.latency_per_retrieval) == approx((2050 / 8, 16 / 8))


def test_the_intervals_resample_the_conversation_whole(run, trajectories):
    decompose = hop_costs(run, trajectories, n_resamples=200, seed=3)[1]
    (expected,) = cluster_mean_ci([300, 320, 450, 200, 300, 310], clusters_of(CLUSTERS), n_resamples=200, seed=3)
    assert (decompose.tokens.ci_low, decompose.tokens.ci_high) == (expected.ci_low, expected.ci_high)
    assert decompose.tokens.ci_low < decompose.tokens.value < decompose.tokens.ci_high
    (independent,) = cluster_mean_ci([300, 320, 450, 200, 300, 310], clusters_of(None, 6), n_resamples=200, seed=3)
    assert (independent.ci_low, independent.ci_high) != (expected.ci_low, expected.ci_high)


def test_the_extra_cost_over_the_single_shot_system(run, trajectories):
    assert single_shot_system(run, trajectories) == "single"
    decompose, iterate = extra_costs(run, trajectories, n_resamples=200)
    assert (decompose.system, decompose.baseline) == ("decompose", "single")
    assert decompose.tokens.value == approx(1160 / 6) and decompose.latency_s.value == approx(1.2)
    assert (iterate.tokens.value, iterate.latency_s.value) == approx((290.0, 2.2))  # c1::2 failed: 5 pairs
    assert (iterate.tokens.n, iterate.tokens.clusters) == (5, 5)
    (over_decompose,) = extra_costs(run, trajectories, "decompose", n_resamples=200)  # only systems that hop
    assert (over_decompose.system, over_decompose.tokens.value) == ("iterate", approx(480 / 5))


def test_without_a_single_shot_system_the_least_hopping_agent_is_the_baseline(run, trajectories):
    agents_only = {k: v for k, v in trajectories.items()}
    agents_only[("single", "q1")] = trajectories[("decompose", "q4")]  # one retrieval step
    assert single_shot_system(run, agents_only) == "single"  # its other outputs still have none
    hopping = dict(agents_only)
    hopping[("single", "q1")] = trajectories[("decompose", "q1")]  # two retrievals: single now hops
    assert single_shot_system(run, hopping) is None


def test_an_estimate_says_why_it_has_no_interval():
    assert estimate([float("nan")], ["a"]).reason == "no value"
    lone = estimate([2.0, float("nan")], ["a", "b"])
    assert (lone.value, lone.n, lone.clusters, lone.ci_low) == (2.0, 1, 1, None) and "fewer than 2" in lone.reason


def test_the_report_and_when_to_look(run, tmp_path):
    report = trajectory_report(run, n_resamples=200)
    assert (report.trajectories, report.single_shot) == (11, "single")
    assert [s.system for s in report.steps] == ["decompose", "iterate"]
    assert may_have_trajectories(run)
    store, run_id = write_run(tmp_path / "plain.db", {"a": [{"metrics": {"m": 1.0}}]})
    try:
        plain = read_run(store, run_id, payloads=True)
    finally:
        store.close()
    assert not may_have_trajectories(plain) and trajectory_report(plain) is None
