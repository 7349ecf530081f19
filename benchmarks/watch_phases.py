"""Where a watch's CPU time goes, per trace: the phases of :class:`ragassay.watch.session.WatchSession`, timed.

Writes N traces (default 20,000; the traces of benchmarks/watch.py), stores them with ``ragassay traces import``
into a fresh project of benchmarks/watch.py (after the watch run exists), then runs the watch over them in this
process with a CPU timer (``time.process_time``) around each phase, and prints the microseconds of CPU each phase
took per trace decided:

- ``read+map``: reading the traces' spans back and mapping them (:func:`ragassay.watch.source.mapped`);
- ``sample``: building each trace's sample (:func:`ragassay.watch.source.trace_sample`);
- ``score``: scoring through the runner (the replayed output, the metrics), less ``settle``;
- ``settle``: settling each result into its rows as it is made (``WatchSession._keep``);
- ``detect``: the detectors and the live page's history (``WatchSession._observe``);
- ``commit``: the batch's transaction (``WatchSession._commit``);
- ``tail``: finding the complete traces (``Tail.read`` and ``Tail.complete``).

The rest (the loop, the decisions, the report) is the difference to the total. Timing wraps the functions, so it
adds a little to each.

    python benchmarks/watch_phases.py [--traces 20000] [--sample 10%]
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from watch import timed, write_chunks, write_project  # noqa: E402

SPENT: collections.Counter[str] = collections.Counter()


def timer(owner: object, name: str, label: str, *, coroutine: bool = False) -> Callable[[], None]:
    """Replace ``owner.name`` by a version that adds its CPU time to ``SPENT[label]``; returns the undo."""
    original = getattr(owner, name)

    def timed_call(*args, **kwargs):
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[label] += time.process_time() - start

    async def timed_coroutine(*args, **kwargs):
        start = time.process_time()
        try:
            return await original(*args, **kwargs)
        finally:
            SPENT[label] += time.process_time() - start

    setattr(owner, name, timed_coroutine if coroutine else timed_call)
    return lambda: setattr(owner, name, original)


def measure(project_dir: Path, traces: int) -> float:
    """Run the watch over ``traces`` stored traces with the phases timed; its CPU seconds."""
    from ragassay.cli.watch_cmd import load_statistics
    from ragassay.engine.project import Project
    from ragassay.watch import StopRule, session, tail, watch

    undo = [
        timer(session, "mapped", "read+map"),
        timer(session, "trace_sample", "sample"),
        timer(session.WatchSession, "_score", "score", coroutine=True),
        timer(session.WatchSession, "_keep", "settle"),
        timer(session.WatchSession, "_observe", "detect"),
        timer(session.WatchSession, "_commit", "commit"),
        timer(tail.Tail, "read", "tail"),
        timer(tail.Tail, "complete", "tail"),
    ]
    try:
        project, statistics = Project.load(project_dir), load_statistics()
        start = time.process_time()
        report = watch(project, statistics, stop=StopRule(traces=traces), say=lambda _: None)
        spent = time.process_time() - start
    finally:
        for restore in undo:
            restore()
    if report.count != traces:
        raise SystemExit(f"the watch decided {report.count} traces, not {traces}: {report.decided}")
    SPENT["score"] -= SPENT["settle"]  # settling happens inside scoring, as each result is made
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--sample", default=None, help='[watch] sample, e.g. "10%%" (default: every trace)')
    args = parser.parse_args()
    n = args.traces
    with tempfile.TemporaryDirectory(prefix="ragassay-watch-phases-") as tmp:
        root = Path(tmp)
        files = write_chunks(root, n, n)
        (root / "project").mkdir()
        project = write_project(root / "project", 256, args.sample)
        ragassay = [sys.executable, "-m", "ragassay"]
        timed([*ragassay, "watch", "-c", str(project), "--from-store", "--for", "0"], project)  # the watch run
        timed([*ragassay, "traces", "import", str(files[0]), "-c", str(project)], project)
        spent = measure(root / "project", n)
    shape = f"sample {args.sample}" if args.sample else "every trace scored"
    print(f"watch: {n:,} traces, {spent:.2f} s of CPU, {1e6 * spent / n:.0f} µs a trace ({shape})")
    for label, seconds in SPENT.most_common():
        print(f"  {label:<9} {1e6 * seconds / n:6.1f} µs a trace")
    print(f"  {'rest':<9} {1e6 * (spent - sum(SPENT.values())) / n:6.1f} µs a trace")


if __name__ == "__main__":
    main()
