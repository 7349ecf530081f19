"""Faults: a 2,000-sample project (4,000 units) under kill -9, a PostgreSQL restart or outage, a full disk, a
read-only results file and a hostile http endpoint; prints one row per scenario.

The scenarios are the fault suite's (``tests/faults``): each must end complete with the digest of a clean run,
or with exit code 2, one clear line, and a store a re-run completes to that digest. Columns: the scenario, what
happened, the faulty run's exit code (-9: killed), its error line, whether the store after recovery equals a
clean run's, and any guarantee that did not hold.

    python benchmarks/faults.py [--only kill,postgres,disk,read-only,http] [--seed 21]

PostgreSQL: a throwaway server (initdb) is started and removed; without the binaries that row is skipped. The
tmpfs disk needs root (mount); the file-size-limit disk runs everywhere.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The suite's helpers are plain modules in these folders (never imported through a package named `tests`).
sys.path[:0] = [str(REPO / "tests" / "faults"), str(REPO / "tests")]

import fault_harness  # noqa: E402
import fault_scenarios  # noqa: E402
from mounts import can_make_read_only, tmpfs_available  # noqa: E402

SCENARIOS = ("kill", "postgres", "disk", "read-only", "http")


def run_scenarios(root: Path, only: set[str], seed: int) -> list[tuple[fault_harness.Outcome, float]]:
    """Every selected scenario, with its wall time; a scenario that cannot run here is a row saying why."""
    rows = []
    clean = fault_scenarios.clean_run(root)

    def timed(name: str, scenario) -> None:
        start = time.perf_counter()
        try:
            outcome = scenario()
        except Exception as exc:  # noqa: BLE001 - a broken scenario is a row, not the end of the table
            outcome = fault_harness.Outcome(name, "scenario error", 1, problems=[f"{type(exc).__name__}: {exc}"])
        rows.append((outcome, time.perf_counter() - start))
        print(f"  {outcome.scenario}: {time.perf_counter() - start:.1f} s", file=sys.stderr)

    if "kill" in only:
        for k, point in enumerate(fault_harness.kill_points(seed)):
            timed("kill -9", lambda k=k, point=point: fault_scenarios.kill_nine(root / f"kill{k}", clean, point))
    if "postgres" in only:
        timed("PostgreSQL restart", lambda: postgres_row(root / "postgres", clean))
        timed("PostgreSQL down", lambda: postgres_row(root / "postgres-down", clean, stays_down=True))
    if "disk" in only:
        methods = ["tmpfs", "fsize"] if tmpfs_available() else ["fsize"]
        for method in methods:
            timed("disk full", lambda m=method: fault_scenarios.disk_full(root / f"disk-{m}", clean, method=m))
    if "read-only" in only:
        if can_make_read_only():
            timed("read-only", lambda: fault_scenarios.read_only_file(root / "read-only", clean))
        else:
            rows.append((fault_harness.Outcome("read-only results file", "skipped: cannot make it read-only", 0), 0))
    if "http" in only:
        timed("hostile http", lambda: fault_scenarios.hostile_http(root / "http"))
    return rows


def postgres_row(root: Path, clean: str, *, stays_down: bool = False) -> fault_harness.Outcome:
    """The restart scenario (``stays_down``: the server does not come back before the run stops) on a throwaway
    server (a skipped row when none can start here)."""
    from postgres_server import PostgresServer

    name = "PostgreSQL down for good" if stays_down else "PostgreSQL restart"
    try:
        server = PostgresServer.start()
    except (RuntimeError, OSError) as exc:
        return fault_harness.Outcome(name, f"skipped: {str(exc).splitlines()[0][:80]}", 0)
    try:
        if stays_down:
            return fault_scenarios.postgres_stays_down(root, server, clean)
        return fault_scenarios.postgres_restart(root, server, clean)
    finally:
        server.stop()


def print_table(rows: list[tuple[fault_harness.Outcome, float]]) -> None:
    """The outcomes as a Markdown table."""
    print("| scenario | outcome | exit | message | digest match | time | problems |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for outcome, seconds in rows:
        message = outcome.message.removeprefix("error: ") or "-"
        match = "yes" if outcome.digest_match else ("-" if outcome.outcome.startswith("skipped") else "NO")
        problems = "; ".join(outcome.problems) or "none"
        print(
            f"| {outcome.scenario} | {outcome.outcome} | {outcome.exit_code} | {message} | {match} | "
            f"{seconds:.1f} s | {problems} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SCENARIOS), help=f"comma-separated, of: {', '.join(SCENARIOS)}")
    parser.add_argument("--seed", type=int, default=21, help="seed of the kill points")
    args = parser.parse_args()
    only = set(args.only.split(","))
    root = Path(tempfile.mkdtemp(prefix="rg-faults-"))
    start = time.perf_counter()
    try:
        rows = run_scenarios(root, only, args.seed)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_table(rows)
    held = sum(1 for outcome, _ in rows if not outcome.problems and not outcome.outcome.startswith("skipped"))
    print(f"\n{held} of {len(rows)} scenarios held every guarantee; {time.perf_counter() - start:.0f} s in all.")


if __name__ == "__main__":
    main()
