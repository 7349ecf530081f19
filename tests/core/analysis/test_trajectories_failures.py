"""Where trajectories fail, on the hand-built agents run (tests/trajectory_runs.py): blame counted by blame, step
kind and hop (exact step_blame first, the judge's for the sample without hops), and the first failed hop with
each hop's found share, exact against the planted table."""

from __future__ import annotations

import pytest
from pytest import approx

from ragassay.analysis.trajectories_failures import blame_columns, blame_summaries, hop_column, hop_summaries
from ragassay.results import read_run

from trajectory_runs import write_trajectory_run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store, run_id = write_trajectory_run(tmp_path_factory.mktemp("trajectory-failures") / "results.db")
    try:
        yield read_run(store, run_id)
    finally:
        store.close()


def test_the_columns_are_found_by_component_name(run):
    assert blame_columns(run) == ["blame", "blame_judge"] and hop_column(run) == "coverage"


def test_blame_by_kind_and_hop(run):
    single, decompose, iterate = blame_summaries(run, n_resamples=200)
    assert (single.judged, single.failed, single.by_blame) == (6, 3, {"missed_hop": 3})
    assert single.by_kind == {"retrieval": 3} and single.by_hop == {"hop 2": 2, "hop 3": 1}
    assert single.sources == {"blame": 5, "blame_judge": 1}
    assert (decompose.failed, decompose.by_hop) == (2, {"hop 1": 1, "hop 2": 1})  # hops in order, not found order
    assert (iterate.judged, iterate.failed) == (5, 3)  # c1::2 failed: not judged
    assert iterate.by_blame == {"tool_error": 1, "loop": 1, "unsupported_answer": 1}
    assert iterate.by_kind == {"tool_call": 1, "retrieval": 1, "answer": 1}
    assert iterate.by_hop == {"hop 2": 1, "hop 3": 1, "(none)": 1}
    assert iterate.failed_share.value == approx(0.6) and single.failed_share.value == 0.5
    assert (single.failed_share.n, single.failed_share.clusters) == (6, 5)


def test_the_first_failed_hop_and_each_hops_found_share(run):
    single, decompose, iterate = hop_summaries(run, n_resamples=200)
    assert (single.metric, single.samples) == ("coverage", 5)  # q4 has no hops: unscored
    assert single.first_failed == {"2": 2, "3": 1, "none": 2}
    assert {i: e.value for i, e in single.found.items()} == approx({1: 1.0, 2: 0.6, 3: 0.0})
    assert (single.found[2].n, single.found[2].clusters) == (5, 4)  # c1's two turns: one cluster
    assert single.found[3].reason == "fewer than 2 instances (1)"
    assert decompose.first_failed == {"1": 1, "2": 1, "none": 3}
    assert {i: e.value for i, e in decompose.found.items()} == approx({1: 0.8, 2: 0.8, 3: 1.0})
    assert (iterate.samples, iterate.first_failed) == (4, {"2": 1, "3": 1, "none": 2})
    assert {i: e.value for i, e in iterate.found.items()} == approx({1: 1.0, 2: 0.75, 3: 0.0})


def test_a_run_without_blame_or_hop_metrics_has_no_summaries(tmp_path):
    from written_runs import write_run

    store, run_id = write_run(tmp_path / "plain.db", {"a": [{"metrics": {"m": 1.0}}]})
    try:
        plain = read_run(store, run_id)
    finally:
        store.close()
    assert blame_summaries(plain) == [] and hop_summaries(plain) == []
