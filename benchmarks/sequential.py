"""Sequential evaluation: samples judged, calls saved and wall time against the full run, live and replayed.

**Live** (``--live``, the default part): real ``ragassay run`` invocations, each a process of its own, against a
loopback OpenAI-compatible server in this process. Two naive RAG systems (BM25 and a generator that answers at
once, each under its own model name) and a correctness judge that answers after ``--judge-latency`` seconds and
says "Correct" at a per-system rate (a hash of the prompt, so the same for both runs): 0.60 against 0.60, 0.75
and 0.90 (0, 15 and 30 points), ``--samples`` samples, ``[evaluation] sequential = { batch = --live-batch }``
(``lookahead`` at its default, 1), concurrency 16 for the run and for every model endpoint (the endpoints'
default of 8 calls in flight would bound the run below the runner's 16).
For each effect size, the full run and the ``--sequential`` run (``--new``, response cache off: every call is
real): the decision, samples judged, the calls the server counted, and the wall time of the process and of the
run window ("units done in").

**Replayed** (``--replay``): no model is called. Two systems are scored on 1,000 samples drawn from fixed
distributions (a 0/1 judge metric with correctness rates 0.60 against 0.60, 0.63 and 0.70 - 0, 3 and 10
points - and a continuous score in [0, 1] sharing a per-sample difficulty, 0.03 apart); each of ``--runs``
seeded replays (:func:`ragassay.analysis.sequential_replay.replay`) orders the samples at random and stops when
the comparison settles. Calls: one judge call per sample and system (2,000 for the full run), a system settled
after batch k judged on k + ``--lookahead`` batches. Time: each call ``--latency`` seconds, ``--concurrency`` at a
time; pipelined (``--lookahead`` 1, the default: the calls flow without a stall at the checks) ceil(calls /
concurrency) x latency, with ``--lookahead 0`` the batches one after the other (a barrier at each check): the sum
over batches of ceil(calls / concurrency) x latency; the full run is the same formula without stopping. Then,
on the 0/1 metric, the interval width at n = 1,000 against the fixed-n paired interval (why a sequence is wider),
and the bets: ragassay's mix of aGRAPA and plug-in bets against the plug-in bets alone, on 2,000 vectorised
replications.

    python benchmarks/sequential.py [--live] [--replay] [--samples 400] [--judge-latency 0.1] [--live-batch 20]
        [--runs 200] [--replay-samples 1000] [--batch 40] [--latency 0.2] [--concurrency 16] [--lookahead 1]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from ragassay.analysis.paired import PairInput, decide_family
from ragassay.analysis.sequential import bounds, log_capital, settle
from ragassay.analysis.sequential_replay import Comparison, SequentialSettings, replay

SCENARIOS = [("0/1, 0 points", 0.60, 0.60), ("0/1, 3 points", 0.60, 0.63), ("0/1, 10 points", 0.60, 0.70)]
CONTINUOUS = ("continuous, 0.03", 0.03)


def draw(scenario, samples: int, seed: int) -> dict:
    """Two systems' values of one metric: 0/1 at the scenario's rates, or a continuous score with a shift."""
    rng = np.random.default_rng(seed)
    if len(scenario) == 3:
        _, p_base, p_cand = scenario
        return {
            "base": {"m": (rng.random(samples) < p_base) * 1.0},
            "cand": {"m": (rng.random(samples) < p_cand) * 1.0},
        }
    difficulty = rng.beta(2, 2, samples)
    noisy = [np.clip(difficulty + shift + rng.normal(0, 0.15, samples), 0, 1) for shift in (0.0, scenario[1])]
    return {"base": {"m": noisy[0]}, "cand": {"m": noisy[1]}}


def wall(batch_calls: list[int], latency: float, concurrency: int, lookahead: int = 0) -> float:
    """Seconds for the batches at the given concurrency: one after the other with a barrier at each check
    (``lookahead`` 0), or pipelined (a batch of look-ahead or more: the calls flow without a stall, as long as
    a batch holds at least ``concurrency`` calls)."""
    if lookahead:
        return math.ceil(sum(batch_calls) / concurrency) * latency
    return sum(math.ceil(calls / concurrency) * latency for calls in batch_calls)


def scenario_row(scenario, args) -> str:
    settings = SequentialSettings(batch=args.batch, lookahead=args.lookahead)
    judged, saved, seconds, decisions = [], [], [], {}
    for run in range(args.runs):
        values = draw(scenario, args.replay_samples, seed=run)
        result = replay(values, [Comparison("cand", "base", "m", 0.0, 1.0)], settings, seed=run)
        judged.append(result.judged["cand"])
        saved.append(result.calls_saved)
        seconds.append(wall(result.batch_calls(args.batch), args.latency, args.concurrency, args.lookahead))
        decisions[result.settled[0].decision] = decisions.get(result.settled[0].decision, 0) + 1
    full_calls = 2 * args.replay_samples
    full_s = wall([full_calls], args.latency, args.concurrency)
    shares = ", ".join(f"{k} {v / args.runs:.0%}" for k, v in sorted(decisions.items()))
    quartiles = f"{np.percentile(judged, 25):.0f}-{np.percentile(judged, 75):.0f}"
    return (
        f"{scenario[0]:<18} {np.median(judged):>7.0f} {quartiles:<11}"
        f" {np.median(saved):>6.0f} of {full_calls} {np.median(seconds):>7.1f} s of {full_s:.1f} s   {shares}"
    )


def widths(args) -> str:
    """Median width of the sequence and of the fixed-n paired interval at n = samples, 0/1 metric, no difference."""
    rows = []
    for run in range(min(args.runs, 50)):
        values = draw(SCENARIOS[0], args.replay_samples, seed=run)
        gains = values["cand"]["m"] - values["base"]["m"]
        low, high = bounds(gains, 1.0, 0.05, args.replay_samples)
        fixed = decide_family([PairInput("k", gains)], 0.05, seed=run, flips=2000)[0]
        rows.append((high - low, fixed.ci_high - fixed.ci_low))
    sequence, fixed = np.median(rows, axis=0)
    return (
        f"width at n = {args.replay_samples}: sequence {sequence:.3f}, fixed-n paired {fixed:.3f} "
        f"({sequence / fixed:.2f}x)"
    )


def plug_in_against_agrapa(args) -> str:
    """10 points on 0/1, 2,000 replications: median samples to settle and power, ragassay's mix and PrPl alone."""
    rng = np.random.default_rng(11)
    gains = (rng.random((2000, args.replay_samples)) < 0.7) * 1.0 - (rng.random((2000, args.replay_samples)) < 0.6)
    ours = settle(gains, 1.0, 0.05, args.batch)
    x = (gains + 1) / 2
    t = np.arange(1, args.replay_samples + 1)
    mu = (0.5 + np.cumsum(x, axis=1)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2, axis=1)) / (t + 1)
    before = np.concatenate([np.full((len(x), 1), 0.25), sigma2[:, :-1]], axis=1)
    plug_in = np.sqrt(2 * math.log(2 / 0.05) / (before * t * np.log(1 + t)))  # PrPl, hedged as two sides
    points = np.arange(args.batch, args.replay_samples + 1, args.batch) - 1
    ever = np.maximum(
        np.maximum.accumulate(log_capital(x, plug_in, 0.5, 1), axis=1),
        np.maximum.accumulate(log_capital(x, -plug_in, 0.5, -1), axis=1),
    )[:, points] >= math.log(2 / 0.05)
    first = np.where(ever.any(axis=1), points[ever.argmax(axis=1)] + 1, args.replay_samples)
    return (
        f"10 points, 2,000 replications: ragassay (aGRAPA + PrPl) median {np.median(ours.settled_at):.0f}, settled "
        f"{np.mean(ours.codes != 0):.1%}; plug-in (PrPl) median {np.median(first):.0f}, "
        f"settled {ever.any(axis=1).mean():.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="only the live runs (default: both parts)")
    parser.add_argument("--replay", action="store_true", help="only the replays (default: both parts)")
    parser.add_argument("--samples", type=int, default=400, help="live: samples of each run")
    parser.add_argument("--judge-latency", type=float, default=0.1, help="live: seconds before the judge answers")
    parser.add_argument("--live-batch", type=int, default=20, help="live: samples per batch")
    parser.add_argument("--runs", type=int, default=200, help="replay: seeded replays per scenario")
    parser.add_argument("--replay-samples", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=40, help="replay: samples per batch")
    parser.add_argument("--latency", type=float, default=0.2, help="replay: seconds a call")
    parser.add_argument("--concurrency", type=int, default=16, help="replay: calls in flight")
    parser.add_argument("--lookahead", type=int, default=1, help="replay: batches run ahead of the check")
    args = parser.parse_args()
    if not args.replay:
        from sequential_live import live

        live(args)
    if not args.live:
        replayed(args)


def replayed(args) -> None:
    """The replayed part (module docstring)."""
    print(
        f"{args.runs} seeded replays of {args.replay_samples} samples x 2 systems, batch {args.batch}, lookahead "
        f"{args.lookahead}, alpha 0.05; "
        f"one judge call per sample and system; {args.latency * 1000:.0f} ms a call, concurrency {args.concurrency}"
    )
    print(f"{'scenario':<18} {'judged':>7} {'IQR':<11} {'calls saved':<14} {'wall time':<16} decisions")
    for scenario in [*SCENARIOS, CONTINUOUS]:
        print(scenario_row(scenario, args))
    print(widths(args))
    print(plug_in_against_agrapa(args))


if __name__ == "__main__":
    main()
