"""``ragassay serve`` page load times on a 10,000-sample run (goal: each page < 300 ms).

Writes a synthetic run (seeded outputs and metric values, as benchmarks/report.py does) into a SQLite results
store through its write API, then requests every page through Starlette's TestClient (the whole app: gate,
store reads, analyses, templates) and prints, per page, the median and the slowest of ``--repeat`` loads, three
times:

- cold: nothing prepared (each load on a fresh app without its preparer, and no resample draws kept in the
  process: the run is read and the page's analyses computed, as by a server that does not prepare pages);
- prepared: the load after a write to the run (a status set again: a new version) once the app's preparer
  (ragassay.present.serve.prepare) has prepared that version's pages: what a refresh during a running evaluation finds
  when the evaluation writes less often than the pages take to prepare;
- warm: a load of an unchanged run (the app asks the run's version, then reuses the run and the page's
  analyses it kept for that version; see ragassay.present.serve.cache).

It also prints the time from each write to the pages being prepared (the preparer polls versions every second).

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


def fresh_client(store, prepare: bool = False):
    """A TestClient of a new app over ``store``: nothing of any run kept yet. Its preparer runs only while the
    client is used as a context manager (the app's lifespan)."""
    from starlette.testclient import TestClient

    from ragassay.present.serve import create_app

    return TestClient(create_app(store, token=None, prepare=prepare), base_url="http://127.0.0.1")


def cold_client(store):
    """A fresh app without a preparer, and no resample draws kept in this process (the first load ever)."""
    from ragassay.analysis import bootstrap

    bootstrap._kept.clear()
    return fresh_client(store)


def prepared_loads(store, run_id: str, paths: list[str], repeat: int) -> tuple[dict[str, list[float]], list[float]]:
    """Per path, the load times after a write once the preparer has prepared the new version; and the seconds
    from each write to that version's pages being prepared."""
    web = fresh_client(store, prepare=True)
    loads: dict[str, list[float]] = {path: [] for path in paths}
    ready = []
    with web:
        preparer, runs = web.app.state.preparer, web.app.state.runs
        for path in paths:
            web.get(path)  # viewed once: its recipe is kept with the run
        for _ in range(repeat):
            store.set_run_status(run_id, "complete")  # a write: a new version, same data
            begin, version = time.perf_counter(), store.run_version(run_id)[1]
            while not (any(e.version == version for e in runs.kept()) and preparer.wait_idle(0.01)):
                time.sleep(0.01)
            ready.append(time.perf_counter() - begin)
            for path in paths:
                loads[path].append(load(web, path))
    return loads, ready


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
    paths = pages(run_id)
    prepared, ready = prepared_loads(store, run_id, paths, args.repeat)
    columns = ("cold", "prepared", "warm")
    print(f"{'page (ms: median / max)':<56}" + "".join(f"{name:>16}" for name in columns))
    meets = dict.fromkeys(columns, 0)
    for path in paths:
        cold = [load(cold_client(store), path) for _ in range(args.repeat)]
        web.get(path)  # fills the kept run and analyses of this page
        warm = [load(web, path) for _ in range(args.repeat)]
        cells = []
        for name, times in zip(columns, (cold, prepared[path], warm)):
            meets[name] += statistics.median(times) < GOAL_MS
            cells.append(f"{statistics.median(times):>9.0f} / {max(times):>4.0f}")
        shown = path.replace(run_id, "RUN")
        print(f"{shown:<56}" + "".join(f"{cell:>16}" for cell in cells))
    print(f"from a write to its pages prepared: median {statistics.median(ready):.1f} s, max {max(ready):.1f} s")
    version = []
    for _ in range(20):
        begin = time.perf_counter()
        store.run_version(run_id)
        version.append(1000 * (time.perf_counter() - begin))
    print(f"the version asked first by every run page: median {statistics.median(version):.1f} ms")
    summary = ", ".join(f"{name} {meets[name]} of {len(paths)}" for name in columns)
    print(f"goal: loads < {GOAL_MS:.0f} ms (median); pages that meet it: {summary}")
    store.close()


if __name__ == "__main__":
    main()
