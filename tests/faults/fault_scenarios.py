"""The fault scenarios: each runs the 2,000-sample project of :mod:`fault_harness` under one fault, recovers
the way a user would (run the same command again, after fixing what the message says), and returns an
:class:`~fault_harness.Outcome`.

Every scenario ends one of two ways: complete with the digest of a clean run, or with exit code 2, one clear
error line, and a store that a re-run completes to that digest. ``Outcome.problems`` lists every guarantee that
did not hold (empty: all held).
"""

from __future__ import annotations

import resource
import subprocess
import time
from pathlib import Path

from fault_harness import (
    RUN_TIMEOUT_S,
    SAMPLES,
    SYSTEMS,
    Outcome,
    cli,
    command,
    count_outputs,
    digest,
    environment,
    error_line,
    integrity_problems,
    ragassay,
    status_problems,
    write_project,
)
from mounts import read_only, small_tmpfs

UNITS = SAMPLES * len(SYSTEMS)


def sqlite_url(project: Path) -> str:
    """The URL of a project's results file (``db/results.db``, the folder mounts replace)."""
    return f"sqlite:///{project / 'db' / 'results.db'}"


def clean_run(root: Path) -> str:
    """The digest of an uninterrupted run of the project (what every scenario must end with)."""
    config = write_project(root / "clean")
    done = ragassay(config)
    if done.returncode != 0:
        raise RuntimeError(f"the clean run failed ({done.returncode}): {done.stderr[-2000:]}")
    return digest(sqlite_url(root / "clean"))


def resume(config: Path, url: str, clean: str, outcome: Outcome, **popen) -> Outcome:
    """Run the same command again: it must complete, resume, and store exactly what a clean run stores."""
    again = ragassay(config, **popen)
    if again.returncode != 0:
        outcome.problems.append(f"the re-run failed ({again.returncode}): {again.stderr[-800:]}")
    elif "resuming run" not in again.stderr:
        outcome.problems.append("the re-run did not resume the run")
    outcome.problems += integrity_problems(url)
    outcome.digest_match = digest(url) == clean
    if not outcome.digest_match:
        outcome.problems.append("the store differs from a clean run's")
    return outcome


def stopped(outcome: Outcome, done: subprocess.CompletedProcess, *, names: str, cause: str) -> Outcome:
    """Check a run stopped the way infrastructure errors must: exit 2, one line naming the database and cause."""
    outcome.exit_code = done.returncode
    outcome.message, problems = error_line(done.stderr)
    outcome.problems += problems
    if done.returncode != 2:
        outcome.problems.append(f"exit code {done.returncode}, not 2: {done.stderr[-800:]}")
    for word in (names, cause):
        if word not in outcome.message:
            outcome.problems.append(f"the error line does not say {word!r}")
    return outcome


# -- kill -9 ---------------------------------------------------------------------------------------------------


def kill_nine(root: Path, clean: str, point: dict) -> Outcome:
    """SIGKILL at a seeded point of a write (a stored-unit count and a phase), then resume."""
    config = write_project(root)
    url = sqlite_url(root)
    killed = ragassay(config, fault={**point, "action": "kill"})
    stored = count_outputs(url)
    outcome = Outcome(
        f"kill -9 at unit {point['after_units']} ({point['phase']})",
        f"killed with {stored}/{UNITS} units stored, resumed",
        killed.returncode,
    )
    if killed.returncode != -9:
        outcome.problems.append(f"the run was not killed (exit {killed.returncode}): {killed.stderr[-800:]}")
    committed = point["phase"] == "after"  # killed once the batch holding the point was committed, or before
    if committed != (stored >= point["after_units"]) or stored > UNITS:
        outcome.problems.append(f"{stored} units stored when killed {'after' if committed else 'before'} the commit")
    outcome.problems += integrity_problems(url)  # a batch is stored whole or not at all
    return resume(config, url, clean, outcome)


# -- a PostgreSQL restart ------------------------------------------------------------------------------------


def postgres_restart(root: Path, server, clean: str, *, down_s: float = 1.5) -> Outcome:
    """Stop the server in the middle of a batch write (the run paused there, its transaction open), keep it
    down for ``down_s``, start it again: the run retries, continues and completes with no help."""
    url = server.create_database()
    password = url.split(":", 2)[2].split("@", 1)[0]
    shown = url.replace(password, "${FAULTS_PG_PASSWORD}")
    config = write_project(root, results=shown, project="results_retry_s = 600\n")  # a slow restart still heals
    paused, go = root / "paused", root / "resume"
    for signal_file in (paused, go):
        signal_file.unlink(missing_ok=True)
    fault = {"after_units": UNITS * 3 // 8, "phase": "outputs", "action": "pause", "paused": str(paused)}
    fault["resume"] = str(go)
    env = environment(FAULTS_PG_PASSWORD=password)
    child = subprocess.Popen(
        command(config, fault=fault), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    outcome = Outcome(f"PostgreSQL restart mid-batch ({down_s:.1f} s down)", "", 0)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while not paused.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        stored_before = count_outputs(url)
        server.shut_down()
        go.write_text("go")
        time.sleep(down_s)  # the run retries against a stopped server meanwhile; any time under the deadline will do
        server.start_again()
        out, err = child.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if child.poll() is None:
            child.kill()
        if not (server.data_dir / "postmaster.pid").exists():
            server.start_again()
    outcome.exit_code = child.returncode
    outcome.outcome = f"paused at {stored_before}/{UNITS} units, server restarted, the run continued"
    if not paused.exists():
        outcome.problems.append("the run never reached the restart point")
    if child.returncode != 0:
        outcome.message, _ = error_line(err)
        outcome.problems.append(f"the run did not survive the restart (exit {child.returncode}): {err[-800:]}")
    elif "was unavailable for" not in err:
        outcome.problems.append("the run did not say that it waited for the database")
    outcome.problems += integrity_problems(url)
    outcome.digest_match = digest(url) == clean
    if not outcome.digest_match:
        outcome.problems.append("the store differs from a clean run's")
    return outcome


def postgres_stays_down(root: Path, server, clean: str, *, retry_s: int = 2) -> Outcome:
    """Stop the server in the middle of a batch write and keep it down: the run retries for ``results_retry_s``,
    then stops with exit 2 and one line saying how long it waited (the writes after it, its status and its lease,
    fail at once and must not print another, wrong, line); its status is not ``complete``; with the server back,
    a re-run completes."""
    url = server.create_database()
    password = url.split(":", 2)[2].split("@", 1)[0]
    shown = url.replace(password, "${FAULTS_PG_PASSWORD}")
    config = write_project(root, results=shown, project=f"results_retry_s = {retry_s}\n")
    paused, go = root / "paused", root / "resume"
    fault = {"after_units": UNITS * 3 // 8, "phase": "outputs", "action": "pause", "paused": str(paused)}
    fault["resume"] = str(go)
    env = environment(FAULTS_PG_PASSWORD=password)
    child = subprocess.Popen(
        command(config, fault=fault), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    outcome = Outcome(f"PostgreSQL down for good mid-batch (results_retry_s = {retry_s})", "", 0)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while not paused.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        server.shut_down()
        go.write_text("go")
        _, err = child.communicate(timeout=RUN_TIMEOUT_S)  # the server stays down until the run has stopped
    finally:
        if child.poll() is None:
            child.kill()
        if not (server.data_dir / "postmaster.pid").exists():
            server.start_again()
    done = subprocess.CompletedProcess(child.args, child.returncode, "", err)
    stopped(outcome, done, names="127.0.0.1", cause=f"did not recover within {retry_s}.")
    outcome.outcome = "stopped after its retry deadline; server started again, resumed"
    if "within 0" in err:
        outcome.problems.append(f"a second, wrong line: {err[-800:]}")
    outcome.problems += status_problems(url)
    return resume(config, url, clean, outcome, env=env)


# -- disk full -----------------------------------------------------------------------------------------------


def disk_full(root: Path, clean: str, *, method: str, limit: int = 4 << 20) -> Outcome:
    """The results file's disk fills up mid-run (a tmpfs of ``limit`` bytes, or a file-size limit of ``limit``
    on the run's process): exit 2 naming the file and the cause; after making room a re-run completes."""
    config = write_project(root)
    url = sqlite_url(root)
    name = f"disk full ({'tmpfs' if method == 'tmpfs' else 'file-size limit'} of {limit >> 20} MiB)"
    outcome = Outcome(name, "", 0)
    if method == "tmpfs":
        with small_tmpfs(root / "db", limit):
            done = ragassay(config)
            stored = count_outputs(url)
            stopped(outcome, done, names=str(root / "db" / "results.db"), cause="disk")
            outcome.problems += integrity_problems(url) + status_problems(url)
            subprocess.run(["mount", "-o", "remount,size=256m", str(root / "db")], check=True)  # make room
            outcome.outcome = f"stopped at {stored}/{UNITS} units; room made, resumed"
            return resume(config, url, clean, outcome)

    def limit_file_size() -> None:  # in the child, before ragassay starts
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = ragassay(config, preexec_fn=limit_file_size)
    stored = count_outputs(url)
    stopped(outcome, done, names=str(root / "db" / "results.db"), cause="disk")
    outcome.problems += integrity_problems(url) + status_problems(url)
    outcome.outcome = f"stopped at {stored}/{UNITS} units; limit lifted, resumed"
    return resume(config, url, clean, outcome)


# -- a read-only results file ------------------------------------------------------------------------------------


def read_only_file(root: Path, clean: str) -> Outcome:
    """A run interrupted (kill -9 after a third of the units), then its results made read-only: reading
    commands still work, ``run`` stops with exit 2 and changes nothing; made writable again, it completes."""
    config = write_project(root)
    url = sqlite_url(root)
    ragassay(config, fault={"after_units": UNITS // 3, "phase": "after", "action": "kill"})
    before = digest(url)
    outcome = Outcome("read-only results file", "", 0)
    with read_only(root / "db"):
        runs = cli("runs", "--config", str(config))
        if runs.returncode != 0 or "interrupted" not in runs.stdout:
            outcome.problems.append(f"'ragassay runs' on the read-only file failed: {runs.stderr[-600:]}")
        done = ragassay(config)
        stopped(outcome, done, names=str(root / "db" / "results.db"), cause="read-only")
    if digest(url) != before:
        outcome.problems.append("the store changed while it was read-only")
    outcome.outcome = f"stopped with {count_outputs(url)}/{UNITS} units stored ('runs' works); made writable, resumed"
    return resume(config, url, clean, outcome)


# -- a hostile http endpoint -------------------------------------------------------------------------------------


def hostile_http(root: Path, *, timeout_s: float = 5.0, max_bytes: int = 65536) -> Outcome:
    """The ``http`` adapter against an endpoint that answers 4 of the 2,000 questions with a 20 MiB body, an
    endless body, a trickle or silence: those units fail with the bound they hit, the run completes, nothing
    huge is stored, and every other unit is what a run against a well-behaved endpoint stores."""
    from hostile_endpoint import HOSTILE, HostileEndpoint, http_systems

    with HostileEndpoint(hostile=False) as endpoint:
        config = write_project(
            root / "clean", systems=http_systems(endpoint.url, timeout_s=timeout_s, max_bytes=max_bytes)
        )
        done = ragassay(config)
        if done.returncode != 0:
            raise RuntimeError(f"the run against a well-behaved endpoint failed: {done.stderr[-2000:]}")
    clean = digest(sqlite_url(root / "clean"), skip=set(HOSTILE))
    with HostileEndpoint(hostile=True) as endpoint:
        config = write_project(
            root / "hostile", systems=http_systems(endpoint.url, timeout_s=timeout_s, max_bytes=max_bytes)
        )
        done = ragassay(config)
    url = sqlite_url(root / "hostile")
    failed = failures(url)
    size = sum(f.stat().st_size for f in (root / "hostile" / "db").iterdir())
    outcome = Outcome(
        f"hostile http endpoint ({len(HOSTILE)} of {SAMPLES} answers)",
        f"complete; {len(failed)} units failed with their bound; {size / 2**20:.1f} MiB stored",
        done.returncode,
    )
    if done.returncode != 0:
        outcome.problems.append(f"the run failed (exit {done.returncode}): {done.stderr[-800:]}")
    if set(failed) != set(HOSTILE):
        outcome.problems.append(f"failed units {sorted(failed)}, not the hostile ones {sorted(HOSTILE)}")
    bound = {"huge": "max_bytes", "endless": "max_bytes", "trickle": "timeout_s", "silent": "timeout_s"}
    for qid, kind in HOSTILE.items():
        if bound[kind] not in failed.get(qid, ""):
            outcome.problems.append(f"the {kind} answer ({qid}) did not fail on {bound[kind]}: {failed.get(qid)!r}")
    if size > 8 << 20:
        outcome.problems.append(f"{size:,} bytes stored: a hostile body was kept")
    outcome.problems += integrity_problems(url)
    outcome.digest_match = digest(url, skip=set(HOSTILE)) == clean
    if not outcome.digest_match:
        outcome.problems.append("the well-answered units differ from a run against a well-behaved endpoint")
    return outcome


def failures(url: str) -> dict[str, str]:
    """question id -> error of the failed outputs of a store."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT question_id, error FROM outputs WHERE status = 'failed'")).all()
    finally:
        engine.dispose()
    return dict(rows)
