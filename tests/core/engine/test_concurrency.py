"""Two real ``ragassay run`` processes on one project: same config refuses or waits, different configs share the
results file, a killed run's lease is taken over. The runs are real; only the system (slow_echo) is scripted."""

from __future__ import annotations

import signal
import time

import pytest

from conftest import cli_env, ragassay_cli
from processes import N, lease_count, scalar, slow_project, start_run, wait_for_outputs

pytestmark = pytest.mark.slow

# Each first run lasts 12 s or more (30 units, 2 at a time), so that the second process, which takes a few
# seconds to start on a loaded 2-core machine, meets it while it works.


def test_second_run_of_the_same_config_refuses_with_one_line(plugin_site, tmp_path):
    config = slow_project(tmp_path, delay_s=1.0)
    db = tmp_path / "ragassay-results.db"
    first = start_run(config, plugin_site)
    wait_for_outputs(db, first, 2)

    second = ragassay_cli("run", str(config), "-q", env=cli_env(plugin_site), timeout=120)
    assert second.returncode == 2, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert lines[0].startswith(f"error: this config is already being run by pid {first.pid} on ")
    assert "--wait" in lines[0]

    assert first.poll() is None, "the refusal must not disturb the first run"
    first.send_signal(signal.SIGINT)  # no need to wait for it: stop it and check what it stored
    _, err = first.communicate(timeout=60)
    assert first.returncode == 130, err
    stored = scalar(db, "select count(*) from outputs")
    assert stored >= 2 and scalar(db, "select count(distinct question_id) from outputs") == stored
    assert scalar(db, "select count(*) from runs") == 1 and lease_count(db) == 0


def test_wait_resumes_after_the_first_run_and_redoes_nothing(plugin_site, tmp_path):
    log = tmp_path / "answered.log"
    config = slow_project(tmp_path, delay_s=0.8, log=log)
    db = tmp_path / "ragassay-results.db"
    first = start_run(config, plugin_site)
    wait_for_outputs(db, first, 2)

    second = ragassay_cli("run", str(config), "-q", "--wait", env=cli_env(plugin_site), timeout=120)
    _, first_err = first.communicate(timeout=120)
    assert first.returncode == 0, first_err
    assert second.returncode == 0, second.stderr
    assert f"waiting: this config is being run by pid {first.pid}" in second.stderr
    assert "resuming run" in second.stderr and f"{N} units ({N} already done)" in second.stderr
    answered = log.read_text().split()
    assert sorted(answered) == sorted(f"s{i:03d}" for i in range(N)), "a unit was answered twice"
    assert scalar(db, "select count(*) from outputs") == N and scalar(db, "select count(*) from runs") == 1


def test_two_configs_on_one_results_file_both_complete(plugin_site, tmp_path):
    a = slow_project(tmp_path, delay_s=0.8, name="a.toml")
    b = slow_project(tmp_path, delay_s=0.85, name="b.toml")
    db = tmp_path / "ragassay-results.db"
    procs = [start_run(a, plugin_site), start_run(b, plugin_site)]  # at once, on a new results file
    deadline = time.time() + 60
    while scalar(db, "select count(distinct run_id) from outputs") < 2 and time.time() < deadline:
        time.sleep(0.05)
    listing = ragassay_cli("runs", "--db", str(db), env=cli_env(plugin_site))
    assert listing.returncode == 0, listing.stderr
    running = {f"running (pid {p.pid} on" for p in procs}
    assert all(text in listing.stdout for text in running), listing.stdout

    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert scalar(db, "select count(*) from runs") == 2
    assert scalar(db, "select count(*) from outputs") == 2 * N
    assert scalar(db, "select count(*) from metric_values") == 2 * N
    assert lease_count(db) == 0


def test_a_killed_runs_lease_is_stale_and_taken_over(plugin_site, tmp_path):
    config = slow_project(tmp_path, delay_s=0.3)
    db = tmp_path / "ragassay-results.db"
    first = start_run(config, plugin_site)
    wait_for_outputs(db, first, 4)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert lease_count(db) == 1  # a crash leaves its lease behind

    listing = ragassay_cli("runs", "--db", str(db), env=cli_env(plugin_site))
    assert "interrupted (run again to resume)" in listing.stdout, listing.stdout

    rerun = ragassay_cli("run", str(config), "-q", env=cli_env(plugin_site), timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert "resuming run" in rerun.stderr
    assert f"warning: took over the lease of an earlier run (pid {first.pid} on" in rerun.stderr
    assert f"process {first.pid} on" in rerun.stderr and "is gone" in rerun.stderr
    assert scalar(db, "select count(*) from outputs") == N
    assert lease_count(db) == 0
