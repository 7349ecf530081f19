"""``ragassay serve`` page load times on a 10,000-sample run (goal: each page < 300 ms).

Writes a synthetic run (seeded outputs and metric values, as benchmarks/report.py does) into a SQLite results
store through its write API, then requests every page through Starlette's TestClient (the whole app: gate,
store reads, analyses, templates) and prints, per page, the median and the slowest of ``--repeat`` loads, twice:

- cold: the first load after the run changed (each load on a fresh app, so nothing of the run is kept: the run
  is read and the page's analyses computed, as after every write of a running evaluation);
- warm: a load of an unchanged run (the app asks the run's version, then reuses the run and the page's
  analyses it kept for that version; see ragassay.serve.cache).

``--profile PAGE`` prints the cProfile of one (warm) page load instead.

    python benchmarks/serve.py [--samples 10000] [--systems 2] [--metrics 4] [--repeat 5] [--profile /runs/RUN]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import write_store_run  # noqa: E402

GOAL_MS = 300.0


def pages(run_id: str) -> list[str]:
    """The pages timed: the runs list, each page of the run, a filtered failure list, a text search, a sample."""
    run = f"/runs/{run_id}"
    return [
        "/",
        run,
        f"{run}/cost",
        f"{run}/breakdowns",
        f"{run}/failures",
        f"{run}/failures?metric=metric0&below=0.2&system=system1",
        f"{run}/failures?q=question%20123",
        f"{run}/samples/q000123",
    ]


def fresh_client(store):
    """A TestClient of a new app over ``store``: nothing of any run kept yet."""
    from starlette.testclient import TestClient

    from ragassay.serve import create_app

    return TestClient(create_app(store, token=None), base_url="http://127.0.0.1")


def load(web, path: str) -> float:
    """Milliseconds to load ``path``; anything but a 200 stops the benchmark."""
    begin = time.perf_counter()
    answer = web.get(path)
    elapsed = 1000 * (time.perf_counter() - begin)
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=2)
    parser.add_argument("--metrics", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", default=None, metavar="PAGE")
    args = parser.parse_args()
    from ragassay.store import open_store

    folder = Path(tempfile.mkdtemp(prefix="serve-bench-"))
    store = open_store(f"sqlite:///{folder / 'results.db'}")
    start = time.perf_counter()
    run_id = write_store_run(store, args.samples, args.systems, args.metrics)
    print(
        f"run: {args.samples:,} samples x {args.systems} systems x {args.metrics} metrics, "
        f"written in {time.perf_counter() - start:.1f} s"
    )
    web = fresh_client(store)
    if args.profile:
        import cProfile
        import pstats

        web.get(args.profile.replace("RUN", run_id))
        profile = cProfile.Profile()
        profile.runcall(web.get, args.profile.replace("RUN", run_id))
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
        return
    print(f"{'page':<60} {'cold median':>11} {'cold max':>8} {'warm median':>11} {'warm max':>8}  (ms)")
    misses = 0
    for path in pages(run_id):
        cold = [load(fresh_client(store), path) for _ in range(args.repeat)]
        web.get(path)  # fills the kept run and analyses of this page
        warm = [load(web, path) for _ in range(args.repeat)]
        misses += statistics.median(warm) >= GOAL_MS
        mark = "" if statistics.median(warm) < GOAL_MS else "  MISSES"
        print(f"{path:<60} {statistics.median(cold):>11.0f} {max(cold):>8.0f} {statistics.median(warm):>11.0f}", end="")
        print(f" {max(warm):>8.0f}{mark}")
    version = []
    for _ in range(20):
        begin = time.perf_counter()
        store.run_version(run_id)
        version.append(1000 * (time.perf_counter() - begin))
    print(f"the version asked first by every run page: median {statistics.median(version):.1f} ms")
    print(f"goal: warm loads < {GOAL_MS:.0f} ms ({misses} page(s) miss it); cold loads follow each change of the run")
    store.close()


if __name__ == "__main__":
    main()
