"""A 2,000-sample project (two systems, five lexical metrics: 4,000 units) under faults.

Each scenario ends complete with the digest of a clean run, or with exit code 2, one clear line and a store a
re-run completes to that digest (see :mod:`fault_scenarios`; ``benchmarks/faults.py`` prints the same
scenarios as a table). Fault points are counted in stored units, never timed.
"""

from __future__ import annotations

import pytest

from fault_harness import kill_points
from fault_scenarios import (
    clean_run,
    disk_full,
    hostile_http,
    kill_nine,
    postgres_restart,
    postgres_stays_down,
    read_only_file,
)
from mounts import can_make_read_only, tmpfs_available

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> str:
    """The digest of an uninterrupted run (computed once for the module)."""
    return clean_run(tmp_path_factory.mktemp("clean"))


def held(outcome) -> None:
    """Every guarantee held: nothing lost, nothing misattached, the store equal to a clean run's."""
    assert outcome.problems == [], f"{outcome.scenario}: {outcome.problems}"
    assert outcome.digest_match


@pytest.mark.parametrize("point", kill_points(), ids=lambda p: f"{p['after_units']}-{p['phase']}")
def test_kill_minus_9_at_a_seeded_point_resumes_to_the_clean_digest(clean, point, tmp_path):
    outcome = kill_nine(tmp_path, clean, point)
    assert outcome.exit_code == -9
    held(outcome)


def test_a_postgresql_restart_in_the_middle_of_a_batch_is_waited_out(clean, postgres_server, tmp_path):
    outcome = postgres_restart(tmp_path, postgres_server, clean)
    assert outcome.exit_code == 0
    held(outcome)


def test_a_postgresql_that_stays_down_stops_the_run_with_one_right_line(clean, postgres_server, tmp_path):
    outcome = postgres_stays_down(tmp_path, postgres_server, clean)
    assert outcome.exit_code == 2 and "did not recover within 2." in outcome.message
    held(outcome)


@pytest.mark.parametrize("method", ["tmpfs", "file-size limit"])
def test_a_full_disk_stops_with_exit_2_and_one_line_and_a_rerun_completes(clean, method, tmp_path):
    if method == "tmpfs" and not tmpfs_available():
        pytest.skip("cannot mount a tmpfs here (needs root); the file-size limit case covers a full disk")
    outcome = disk_full(tmp_path, clean, method="tmpfs" if method == "tmpfs" else "fsize")
    assert outcome.exit_code == 2 and outcome.message.startswith("error: results database ")
    held(outcome)


@pytest.mark.skipif(not can_make_read_only(), reason="cannot make a folder read-only here")
def test_a_read_only_results_file_is_read_stops_a_run_and_resumes_once_writable(clean, tmp_path):
    outcome = read_only_file(tmp_path, clean)
    assert outcome.exit_code == 2 and "read-only" in outcome.message
    held(outcome)


def test_a_hostile_http_endpoint_fails_only_its_units_with_the_bound_they_hit(tmp_path):
    outcome = hostile_http(tmp_path)
    assert outcome.exit_code == 0
    held(outcome)
