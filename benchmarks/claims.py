"""Claim metrics: calls and tokens per sample, and wall time against the ideal, with a loopback judge model.

The 3 results of RAGChecker's reference file (tests/data/ragchecker) are repeated to ``--samples`` outputs (the
judge's response cache off, so every output makes its own calls). All 11 ``rc_*`` metrics score every output, one
after another per output as the runner does (one shared claim run per output), all outputs at once, through one
``openai`` generator with at most ``--concurrency`` calls in flight, against a server in its own process that
answers each call after ``--latency-ms`` from the reference file (tests/plugins/claims/claims_llm.py). Prints:

1. calls and tokens per sample, estimated before (from the text lengths: one claim per ``WORDS_PER_CLAIM`` words,
   prompt characters / 4) and counted after (the usage the runner records);
2. wall time against the ideal, max(calls x latency / concurrency, 2 rounds x latency): an output's checks wait
   for its extractions;
3. RAGChecker's call pattern for the same outputs, 2 + (1 + k)(ceil(c_r/5) + ceil(c_g/5)).

    python benchmarks/claims.py [--samples 400] [--concurrency 16] [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # the loopback servers shared with the tests (see benchmarks/judges.py)
sys.path.insert(0, str(REPO / "tests" / "plugins" / "claims"))

from ragassay.components import ComponentContext  # noqa: E402
from ragassay.models import RAGOutput, Sample  # noqa: E402
from ragassay.plugin_manager import get_plugin_host  # noqa: E402
from ragassay.plugins.claims.checking import planned_calls, ragchecker_calls  # noqa: E402
from ragassay.plugins.claims.prompts import CHECKING_PROMPT, EXTRACTION_PROMPT  # noqa: E402
from ragassay.plugins.claims.specs import SPECS  # noqa: E402

WORDS_PER_CLAIM = 6  # the reference file has one claim per 4.5-6.5 words
PER_CALL = 20  # claims_per_call (the default)


def serve(latency_s: float, ready, stop) -> None:
    """Child process: the reference judge, answering after ``latency_s``."""
    import dataclasses

    from claims_llm import ReferenceJudge
    from servers.openai_chat import OpenAIChatServer

    judge = ReferenceJudge()
    server = OpenAIChatServer()
    server.default = lambda request: dataclasses.replace(judge(request), delay_s=latency_s)
    with server:
        ready.send(server.url)
        stop.wait()


def outputs(n: int) -> list[tuple[Sample, RAGOutput, dict]]:
    results = json.loads((REPO / "tests/data/ragchecker/checking_outputs.json").read_text())["results"]
    made = []
    for i in range(n):
        r = results[i % len(results)]
        sample = Sample(question_id=f"q{i}", question=r["query"], reference_answers=[r["gt_answer"]])
        docs = r["retrieved_context"]
        output = RAGOutput(
            answer=r["response"], contexts=[d["text"] for d in docs], context_ids=[d["doc_id"] for d in docs]
        )
        made.append((sample, output, r))
    return made


def estimate(sample: Sample, output: RAGOutput) -> tuple[int, int]:
    """(calls, tokens) expected before any call, from the text lengths alone."""
    c_r = math.ceil(len(output.answer.split()) / WORDS_PER_CLAIM)
    c_g = math.ceil(len(sample.reference_answers[0].split()) / WORDS_PER_CLAIM)
    k = len(output.contexts)
    calls = planned_calls(c_r, c_g, k, PER_CALL)
    claim_chars = 60  # a rendered triplet
    chars = 2 * len(EXTRACTION_PROMPT) + len(output.answer) + len(sample.reference_answers[0])
    chars += math.ceil(c_r / PER_CALL) * (len(CHECKING_PROMPT) + len(sample.reference_answers[0])) + c_r * claim_chars
    chars += math.ceil(c_g / PER_CALL) * (len(CHECKING_PROMPT) + len(output.answer)) + c_g * claim_chars
    for text in output.contexts:
        chars += math.ceil((c_r + c_g) / PER_CALL) * (len(CHECKING_PROMPT) + len(text)) + (c_r + c_g) * claim_chars
    schema_chars = 600 * calls  # the response schema sent with each call
    output_tokens = (c_r + c_g) * 15 + (c_r + c_g) * (1 + k) * 20  # claims written, then verdicts
    return calls, (chars + schema_chars) // 4 + output_tokens


async def score_all(url: str, items, concurrency: int, cache_dir: Path):
    registry = get_plugin_host().registry
    context = ComponentContext(registry=registry, project_dir=cache_dir, cache_dir=cache_dir)
    options = {"model": "judge", "base_url": url + "/v1", "cache": False, "concurrency": concurrency}
    generator = {"name": "openai", "options": options}
    metrics = [context.build("metric", {"name": f"rc_{s.name}", "options": {"generator": generator}}) for s in SPECS]
    from ragassay.llm.meter import metering

    async def one(sample, output):
        usage = []
        for metric in metrics:
            with metering() as meter:
                value = await metric.ascore(sample, output)
            usage.append(meter.usage)
        return value, [u for u in usage if u is not None]

    return await asyncio.gather(*(one(s, o) for s, o, _ in items))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
    latency = args.latency_ms / 1000
    items = outputs(args.samples)
    receive, send = multiprocessing.Pipe(duplex=False)
    stop = multiprocessing.Event()
    process = multiprocessing.Process(target=serve, args=(latency, send, stop), daemon=True)
    process.start()
    try:
        url = receive.recv()
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            scored = asyncio.run(score_all(url, items, args.concurrency, Path(folder)))
            wall = time.perf_counter() - start
    finally:
        stop.set()
        process.join(timeout=10)
    estimated = [estimate(s, o) for s, o, _ in items]
    calls = [sum(u.calls for u in usages) for _, usages in scored]
    tokens = [sum(u.input_tokens + u.output_tokens for u in usages) for _, usages in scored]
    ours = [
        planned_calls(len(r["response_claims"]), len(r["gt_answer_claims"]), len(r["retrieved_context"]), PER_CALL)
        for *_, r in items
    ]
    theirs = [
        ragchecker_calls(len(r["response_claims"]), len(r["gt_answer_claims"]), len(r["retrieved_context"]))
        for *_, r in items
    ]
    n = len(items)
    ideal = max(sum(calls) * latency / args.concurrency, 2 * latency)
    print(f"{n} samples, 11 rc_* metrics each, judge latency {args.latency_ms:.0f} ms, concurrency {args.concurrency}")
    print(
        f"calls per sample:  estimated {sum(c for c, _ in estimated) / n:.1f}, counted {sum(calls) / n:.1f}"
        f" (planned from the extracted claims {sum(ours) / n:.1f})"
    )
    print(f"tokens per sample: estimated {sum(t for _, t in estimated) / n:.0f}, counted {sum(tokens) / n:.0f}")
    print(f"wall time: {wall:.1f} s, ideal {ideal:.1f} s ({wall / ideal:.2f}x)")
    print(
        f"RAGChecker's pattern for the same outputs: {sum(theirs) / n:.1f} calls per sample "
        f"(ragassay: {sum(ours) / n:.1f}, {sum(theirs) / max(1, sum(ours)):.2f}x fewer)"
    )
    unscored = sum(1 for value, _ in scored if getattr(value, "value", None) is None)
    print(f"outputs whose last metric is unscored: {unscored}")


if __name__ == "__main__":
    main()
