"""Change detection for ``ragassay watch``: false alarms without a change and median detection delay after a drop,
the detector against a daily fixed-window test on the same seeded streams.

Each scenario: ``--streams`` streams of ``--length`` 0/1 values at mean 0.8, dropping by the shift at a change
point uniform on traces [1000, 3000); the detector (:mod:`ragassay.analysis.monitor_evidence`) against the
reference 0.8 at ``--alpha``; the comparator: traces arrive at ``--per-day`` a day and each whole day's window is
tested against 0.8 with a two-sided t interval at level 1 - alpha / m, m the days of the horizon (Bonferroni), its
alarm at the end of the day that fires (:mod:`ragassay.analysis.monitor_replay` states both exactly).
Delays are in traces, from the change to the alarm inclusive; "-" = not detected in at least half the streams.

    python benchmarks/watch_detection.py [--streams 1000] [--length 5000] [--per-day 500 250 1000] [--alpha 0.05]
        [--long 20000] [--memory 1000000]

``--memory N`` feeds one :class:`ragassay.analysis.monitor.Detector` N uniform values (a new version label every
trace, so its counters hit their caps) and prints the memory it holds (tracemalloc, current) and its saved state's
size at 1,000, 100,000 and N traces, and the time per trace.
"""

from __future__ import annotations

import argparse

import numpy as np

from ragassay.analysis.monitor_replay import simulate


def median(delays: np.ndarray) -> str:
    value = float(np.median(delays))
    return f"{value:,.0f}" if np.isfinite(value) else "-"


def detected(delays: np.ndarray) -> str:
    return f"{np.isfinite(delays).mean():.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1_000)
    parser.add_argument("--length", type=int, default=5_000)
    parser.add_argument("--per-day", type=int, nargs="+", default=[500, 250, 1000])
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--long", type=int, default=20_000, help="length of the extra 2-point run (0: skip)")
    parser.add_argument("--memory", type=int, default=0, help="traces for the memory run (0: skip)")
    args = parser.parse_args()
    if args.memory:
        memory(args.memory)
        return
    print(f"{args.streams:,} streams of {args.length:,} traces, mean 0.8, alpha {args.alpha}")
    for per_day in args.per_day:
        null = simulate(0.0, streams=args.streams, length=args.length, alpha=args.alpha, per_day=per_day, seed=1)
        print(f"\n{per_day} traces a day ({args.length // per_day} days, Bonferroni over them)")
        print(
            f"no change: false alarms, detector {null.false_alarms()}/{args.streams}, "
            f"daily window {null.false_alarms('window')}/{args.streams}"
        )
        print("| shift | detector median delay | detected | daily window median delay | detected |")
        print("| --- | --- | --- | --- | --- |")
        for shift in (0.02, 0.05, 0.10):
            run = simulate(shift, streams=args.streams, length=args.length, alpha=args.alpha, per_day=per_day, seed=3)
            d, w = run.detector_delay, run.window_delay
            print(f"| {shift * 100:.0f} points | {median(d)} | {detected(d)} | {median(w)} | {detected(w)} |")
    if args.long:
        run = simulate(0.02, streams=args.streams, length=args.long, alpha=args.alpha, per_day=args.per_day[0], seed=3)
        d, w = run.detector_delay, run.window_delay
        print(
            f"\n2 points over {args.long:,} traces ({args.long // args.per_day[0]} days at {args.per_day[0]} a day): "
            f"detector {median(d)} ({detected(d)}), daily window {median(w)} ({detected(w)})"
        )


def memory(n: int) -> None:
    import json
    import time
    import tracemalloc

    from ragassay.analysis.monitor import Detector, Observation

    rng = np.random.default_rng(0)
    tracemalloc.start()
    detector, started = Detector("m", 0.5), time.perf_counter()
    for i in range(n):
        detector.observe(Observation(float(rng.random()), float(i), f"t{i}", {"service.version": f"v{i}"}))
        if i + 1 in (1_000, 100_000, n):
            held = tracemalloc.get_traced_memory()[0]
            size = len(json.dumps(detector.state()))
            print(f"{i + 1:>9,} traces: {held / 1024:,.0f} KiB traced, state {size / 1024:,.1f} KiB")
    tracemalloc.stop()
    print(f"{(time.perf_counter() - started) / n * 1e6:.0f} us a trace (with tracemalloc on)")


if __name__ == "__main__":
    main()
