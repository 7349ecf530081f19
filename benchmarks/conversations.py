"""Conversations: what a conversational run costs per turn, and whether memory stays flat in the number of
conversations.

Two parts (both by default), on synthetic conversations made here from ``--seed`` (a catalogue of items; each
conversation asks about a few of them over ``--turns`` turns, the history being the earlier questions and
reference answers):

``overhead``: the same turns run twice with the same system (keyword retriever, extractive generator) and the
lexical metrics: once as conversation turns (``conversation_id``, ``turn``, ``history``) and once as single
questions (the same ids, questions and references, no conversation fields). Each run is a fresh process; the runs
alternate, ``--repeats`` times, and the figure is the median run-loop time per turn and the ratio of the two
(goal: a conversational run within 1.2 times the single-question one).

``memory``: conversation runs of ``--sizes`` conversations (default 1,000, 5,000 and 20,000 of 4 turns) with a
system that answers at once (benchmarks/runner_overhead.py) and the lexical metrics, each in a fresh process:
the driver's peak RSS over the whole process, its RSS at the start of the run loop and every 10% of the loop,
and the growth of the peak from the smallest to the largest size (flat: samples and their histories stream
through the driver, never held whole).

    python benchmarks/conversations.py [overhead|memory|all] [--conversations 1000] [--turns 4] [--repeats 3]
        [--sizes 1000,5000,20000] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # runner_overhead and scale, run from anywhere

MIB = 1024 * 1024
ITEMS = 400
METRICS = ["token_recall", "token_f1", "k_precision", "exact_match", "contains_answer", "context_mrr"]
FOLLOW_UPS = [
    "And what about item number {i}?",
    "What is the value of item number {i} then?",
    "Tell me the value of item {i} as well.",
]


def value(i: int) -> int:
    return i * 7 % 1000


def conversation_rows(conversations: int, turns: int, seed: int, conversational: bool):
    """The turns as dataset rows: ``conversations`` x ``turns``, the items of each chosen by ``seed``."""
    rng = random.Random(seed)
    for c in range(conversations):
        history: list[dict] = []
        for t in range(1, turns + 1):
            i = rng.randrange(ITEMS)
            question = f"What is the value of item number {i} in the catalogue?" if t == 1 else FOLLOW_UPS[t % 3]
            question = question.format(i=i)
            row = {
                "question_id": f"c{c}::{t}",
                "question": question,
                "reference_answers": [f"value {value(i)}"],
                "reference_contexts": [f"Item number {i} in the catalogue has value {value(i)}."],
                "reference_context_ids": [f"corpus/item{i}.txt"],
            }
            if conversational:
                row |= {"conversation_id": f"c{c}", "turn": t, "history": list(history)}
            yield row
            history += [{"speaker": "user", "text": question}, {"speaker": "agent", "text": f"value {value(i)}"}]


SYSTEMS = {
    "keyword": """
        [corpus]
        paths = ["corpus/*"]
        [defaults]
        chunker = { name = "recursive", options = { size = 200, overlap = 0 } }
        [systems.keyword]
        retriever = "keyword"
        generator = "extractive"
        options = { top_k = 2 }
    """,
    "instant": """
        [systems.instant]
        rag = "bench/instant"
    """,
}


def write_project(root: Path, rows, system: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "qa.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    if system == "keyword":
        (root / "corpus").mkdir(exist_ok=True)
        for i in range(ITEMS):
            (root / "corpus" / f"item{i}.txt").write_text(f"Item number {i} in the catalogue has value {value(i)}.")
    config = root / "ragassay.toml"
    config.write_text(
        textwrap.dedent("""
        [project]
        concurrency = 8
        [dataset]
        options = { path = "qa.jsonl" }
        [evaluation]
        metrics = %s
    """)
        % json.dumps(METRICS)
        + textwrap.dedent(SYSTEMS[system])
    )
    return config


def one_run(args: argparse.Namespace) -> None:
    """Run the project at ``--root`` in this process and print its figures as JSON (the child of each part)."""
    import resource

    from runner_overhead import Plugin
    from scale import RSSSampler

    import ragassay

    sampler = RSSSampler(every_s=0.2)
    marks: dict[str, float] = {}

    def on_start(summary) -> None:
        marks["rss_loop"] = sampler.process.memory_info().rss
        marks["loop"] = time.perf_counter()
        sampler.start()

    run = ragassay.run(Path(args.root) / "ragassay.toml", plugins=[("bench", Plugin())], new=True, on_start=on_start)
    sampler.stop()
    loop = [rss for t, rss in sampler.samples if t >= marks["loop"]]
    deciles = [loop[min(len(loop) - 1, len(loop) * k // 10)] for k in range(1, 11)] if loop else []
    assert run.failed == 0 and run.completed > 0, run.summary
    print(
        json.dumps(
            {
                "turns": run.completed,
                "loop_s": run.summary.elapsed_s,
                "rss_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,  # Linux: KiB
                "rss_loop_start": marks["rss_loop"],
                "rss_deciles": deciles,
            }
        )
    )


def child(root: Path) -> dict:
    done = subprocess.run([sys.executable, __file__, "_one", "--root", str(root)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"run in {root} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def overhead(args: argparse.Namespace) -> None:
    n = args.conversations * args.turns
    print(f"== overhead: {args.conversations:,} conversations x {args.turns} turns = {n:,} turns, keyword retriever +")
    print(f"   extractive generator, metrics {', '.join(METRICS)}; {args.repeats} alternating runs of each")
    per_turn: dict[str, list[float]] = {"single": [], "conversation": []}
    with tempfile.TemporaryDirectory(prefix="ragassay-conv-") as tmp:
        roots = {
            mode: write_project(
                Path(tmp) / mode,
                conversation_rows(args.conversations, args.turns, args.seed, mode == "conversation"),
                "keyword",
            ).parent
            for mode in per_turn
        }
        for repeat in range(args.repeats):
            for mode in per_turn if repeat % 2 == 0 else reversed(list(per_turn)):
                result = child(roots[mode])
                assert result["turns"] == n, result
                per_turn[mode].append(result["loop_s"] / n)
                print(f"   run {repeat + 1} {mode:<12} {result['loop_s'] / n * 1e6:>8,.0f} us/turn", flush=True)
    single, conversation = (statistics.median(per_turn[m]) for m in ("single", "conversation"))
    print(f"median per turn: single questions {single * 1e6:,.0f} us, conversation turns {conversation * 1e6:,.0f} us")
    print(f"conversational / single: {conversation / single:.3f}x (goal: at most 1.2x)")


def memory(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"== memory: {', '.join(f'{s:,}' for s in sizes)} conversations x {args.turns} turns, instant system,")
    print(f"   metrics {', '.join(METRICS)}; each size in a fresh process, as conversation turns and, for")
    print("   comparison, as the same turns without their conversation (single questions)")
    peaks: dict[str, dict[int, float]] = {"conversation": {}, "single": {}}
    for size in sizes:
        for mode in peaks:
            with tempfile.TemporaryDirectory(prefix="ragassay-conv-") as tmp:
                rows = conversation_rows(size, args.turns, args.seed, mode == "conversation")
                r = child(write_project(Path(tmp), rows, "instant").parent)
            peaks[mode][size] = r["rss_peak"] / MIB
            print(
                f"{size:>7,} conversations ({r['turns']:>7,} turns) as {mode:<12}: {r['turns'] / r['loop_s']:>6,.0f} "
                f"turns/s, driver peak RSS {peaks[mode][size]:.0f} MiB (at loop start {r['rss_loop_start'] / MIB:.0f})",
                flush=True,
            )
            print(f"{'':<9}RSS every 10% of the loop (MiB): {[round(x / MIB) for x in r['rss_deciles']]}", flush=True)
    for mode, by_size in peaks.items():
        growth = (by_size[sizes[-1]] / by_size[sizes[0]] - 1) * 100
        print(f"{mode}: peak RSS growth from {sizes[0]:,} to {sizes[-1]:,} conversations: {growth:+.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", default="all", choices=["all", "overhead", "memory", "_one"])
    parser.add_argument("--conversations", type=int, default=1000, help="Conversations of the overhead part.")
    parser.add_argument("--turns", type=int, default=4, help="Turns per conversation.")
    parser.add_argument("--repeats", type=int, default=3, help="Runs of each mode in the overhead part.")
    parser.add_argument("--sizes", default="1000,5000,20000", help="Conversation counts of the memory part.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part == "_one":
        one_run(args)
        return
    if args.part in ("all", "overhead"):
        overhead(args)
    if args.part in ("all", "memory"):
        memory(args)


if __name__ == "__main__":
    main()
