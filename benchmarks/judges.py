"""Judge throughput: ``citation_groundedness`` on many answers against a local OpenAI-compatible fact-checker.

400 answers of 3-6 segments (cited segments, some citing a missing source, and an uncited conclusion) are scored
at once, all through one ``openai`` generator with at most ``--concurrency`` calls in flight, against a server
(in its own process) that answers every call after ``--latency-ms``. Each answer makes two dependent rounds of
calls (cited segments, then uncited ones). Prints:

1. wall time against the ideal, max(calls x latency / concurrency, 2 rounds x latency) (goal: within 1.15x);
2. the same answers against a server that fails ``--fault-rate`` of the calls (HTTP 429 with Retry-After,
   HTTP 500, or a reply slower than the client's timeout): answers lost (goal: 0; every value a number, the
   same numbers as in 1);
3. the first run again with every reply in the response cache (goal: under 5% of the first run's wall time);
4. model calls per answer.

    python benchmarks/judges.py [--answers 400] [--concurrency 16] [--latency-ms 200] [--fault-rate 0.2]

The metric is called directly (``ascore`` for every answer at once, as a runner with enough units in flight
would); the runner and the results store are not part of this measurement. ``--end-to-end`` runs
``benchmarks/judges_run.py`` instead: a whole ``ragassay run`` (a subprocess) timed from the server's log.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The loopback protocol servers shared with the tests, imported as `servers` from the tests folder put first on
# the path: never as `tests.servers` (the folder has no __init__.py, so any installed package named `tests` wins).
sys.path.insert(0, str(REPO / "tests"))

from ragassay.components import ComponentContext  # noqa: E402
from ragassay.llm.cache import close_caches  # noqa: E402
from ragassay.llm.settings import LLMSection, runtime_settings  # noqa: E402
from ragassay.models import MetricResult, RAGOutput, Sample  # noqa: E402
from ragassay.plugin_manager import get_plugin_host  # noqa: E402

TIMEOUT_S = 1.0  # the client's per-attempt timeout; a "timeout" fault answers after 1.5 x this


def serve(latency_s: float, fault_rate: float, ready, stop) -> None:
    """Child process: a fact-checker answering after ``latency_s``; ``fault_rate`` of the calls fail."""
    from servers.openai_chat import OpenAIChatServer, Turn, rate_limited, server_error, stalled

    faults = random.Random(7)

    def reply(request):
        first_user = next(m["content"] for m in request.json["messages"] if m["role"] == "user")
        text = json.loads(first_user)["text"]
        verdict = {"explanation": f"checked: {text}", "correct": "unsupported" not in text}
        turn = Turn(text=json.dumps(verdict), usage=(120, 20, 0), delay_s=latency_s)
        draw = faults.random()
        if draw < fault_rate / 3:
            return rate_limited(0.1)
        if draw < 2 * fault_rate / 3:
            return server_error(500)
        if draw < fault_rate:
            return stalled(1.5 * TIMEOUT_S, turn)
        return turn

    with OpenAIChatServer(default=reply) as server:
        ready.put(server.url)
        stop.wait()


def answers(count: int) -> list[tuple[Sample, RAGOutput]]:
    """``count`` answers of 3-6 segments over 3 contexts (seeded): cited segments (a few unsupported, a few
    citing a missing source [4]) and an uncited conclusion."""
    rng = random.Random(0)
    contexts = [f"Source {n} states fact {n} about the topic." for n in (1, 2, 3)]
    made = []
    for i in range(count):
        cited = []
        for j in range(rng.randint(2, 5)):
            source = rng.choice([1, 2, 3, 3, 2, 1, 1, 2, 3, 4])
            kind = "unsupported claim" if rng.random() < 0.2 else "fact"
            cited.append(f"Answer {i} states {kind} {j} [{source}].")
        answer = " ".join(cited) + f"\n\nIn conclusion, answer {i} is well supported."
        made.append(
            (Sample(question_id=f"q{i}", question=f"question {i}?"), RAGOutput(answer=answer, contexts=contexts))
        )
    return made


def metric(url: str, cache_dir: Path, concurrency: int, faulty: bool):
    settings = {"llm": runtime_settings(LLMSection(cache=True), cache_dir)}
    registry = get_plugin_host().registry
    context = ComponentContext(project_dir=cache_dir, cache_dir=cache_dir, settings=settings, registry=registry)
    options = {"model": "gpt-4o", "base_url": f"{url}/v1", "concurrency": concurrency, "timeout_s": TIMEOUT_S}
    if faulty:
        options.update(backoff_s=0.05, max_backoff_s=0.4)  # retries bounded by the default retry_deadline_s
    return context.build(
        "metric", {"name": "citation_groundedness", "options": {"generator": {"name": "openai", "options": options}}}
    )


async def score_all(m, items) -> tuple[float, list]:
    import openai  # noqa: F401 - imported before the clock starts

    start = time.perf_counter()
    results = await asyncio.gather(*(m.ascore(s, o) for s, o in items), return_exceptions=True)
    return time.perf_counter() - start, results


def values(results: list) -> list[float | None]:
    return [r.value if isinstance(r, MetricResult) else None for r in results]


def lost(results: list) -> list[str]:
    return [repr(r)[:160] for r in results if not isinstance(r, MetricResult)]


def with_server(latency_s: float, fault_rate: float, job):
    ready, stop = multiprocessing.Queue(), multiprocessing.Event()
    child = multiprocessing.Process(target=serve, args=(latency_s, fault_rate, ready, stop), daemon=True)
    child.start()
    try:
        return job(ready.get(timeout=30))
    finally:
        stop.set()
        child.join(timeout=10)


def main() -> None:
    if "--end-to-end" in sys.argv:
        sys.argv.remove("--end-to-end")
        sys.path.insert(0, str(REPO / "benchmarks"))
        from judges_run import main as end_to_end

        return end_to_end()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--fault-rate", type=float, default=0.2)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-not-a-real-key")
    logging.getLogger("ragassay.llm").setLevel(logging.ERROR)  # retries are counted below, not logged
    items, latency = answers(args.answers), args.latency_ms / 1000
    with tempfile.TemporaryDirectory() as tmp:
        clean = Path(tmp) / "clean"

        def first_and_cached(url):
            m = metric(url, clean, args.concurrency, faulty=False)
            wall, results = asyncio.run(score_all(m, items))
            stats = m._fact_checker.generator.client.stats
            close_caches()  # the re-run opens the cache afresh, as a new process would
            again = metric(url, clean, args.concurrency, faulty=False)
            cached_wall, cached = asyncio.run(score_all(again, items))
            close_caches()
            return wall, results, stats, cached_wall, cached, again._fact_checker.generator.client.stats

        wall, results, stats, cached_wall, cached, cached_stats = with_server(latency, 0.0, first_and_cached)
        calls = stats.calls
        ideal = max(calls * latency / args.concurrency, 2 * latency)
        segments = sum(r.details["total_segments"] for r in results if isinstance(r, MetricResult))
        print(
            f"{args.answers} answers, {segments} segments, {calls} fact-check calls ({calls / args.answers:.2f} per "
            f"answer), {args.latency_ms:.0f} ms each, concurrency {args.concurrency}: {wall:.2f} s wall, ideal "
            f"{ideal:.2f} s, ratio {wall / ideal:.3f} (goal <= 1.15); lost {len(lost(results))}; "
            f"mean groundedness {sum(v for v in values(results) if v is not None) / args.answers:.4f}"
        )
        print(
            f"cached re-run: {cached_wall:.3f} s = {100 * cached_wall / wall:.2f}% of the first (goal < 5%); model "
            f"calls {cached_stats.calls}, cache hits {cached_stats.cache_hits}; same values: "
            f"{values(cached) == values(results)}"
        )

        def faulty(url):
            m = metric(url, Path(tmp) / "faulty", args.concurrency, faulty=True)
            out = asyncio.run(score_all(m, items))
            close_caches()
            return (*out, m._fact_checker.generator.client.stats)

        f_wall, f_results, f_stats = with_server(latency, args.fault_rate, faulty)
        missing = lost(f_results)
        print(
            f"with {100 * args.fault_rate:.0f}% injected faults (429 / 500 / {1.5 * TIMEOUT_S:.1f} s stall past a "
            f"{TIMEOUT_S:.1f} s timeout): {f_wall:.2f} s wall, {f_stats.calls} attempts, {f_stats.retries} retries; "
            f"answers lost {len(missing)} (goal 0); same values as without faults: "
            f"{values(f_results) == values(results)}"
        )
        for line in missing[:5]:
            print(f"  lost: {line}")


if __name__ == "__main__":
    main()
