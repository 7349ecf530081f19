"""LLM layer throughput: 2,000 calls through the ``openai`` generator to a local OpenAI-compatible server that
answers each call after a fixed 200 ms, at most 32 in flight (the generator's ``concurrency``).

Prints the wall time against the ideal (calls x latency / concurrency; goal: within 1.15x), then the same
2,000 calls again with every reply in the response cache (goal: under 2% of the first run's wall time), then
the local SmolLM2-135M-Instruct model's tokens/s on this machine, one prompt alone and 8 prompts batched.

    python benchmarks/llm_throughput.py [--calls 2000] [--concurrency 32] [--latency-ms 200] [--skip-local]

The server runs in its own process so that it does not compete with the client for the GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The loopback protocol servers shared with the tests, imported as `servers` from the tests folder put first on
# the path: never as `tests.servers` (the folder has no __init__.py, so any installed package named `tests` wins).
sys.path.insert(0, str(REPO / "tests"))

from ragassay.components import ComponentContext, GenerationRequest  # noqa: E402
from ragassay.llm.cache import close_caches  # noqa: E402
from ragassay.llm.settings import LLMSection, runtime_settings  # noqa: E402


def serve(latency_s: float, ready, stop) -> None:
    """Child process: an OpenAI chat-completions server answering every call after ``latency_s``."""
    from servers.openai_chat import OpenAIChatServer, Turn

    def reply(request):
        return Turn(text=f"answer to {OpenAIChatServer.last_user_text(request)}", usage=(50, 5, 0), delay_s=latency_s)

    with OpenAIChatServer(default=reply) as server:
        ready.put(server.url)
        stop.wait()


def context(cache_dir: Path, cache: bool = True) -> ComponentContext:
    return ComponentContext(
        project_dir=cache_dir,
        cache_dir=cache_dir,
        settings={"llm": runtime_settings(LLMSection(cache=cache), cache_dir)},
    )


async def burst(url: str, cache_dir: Path, calls: int, concurrency: int) -> tuple[float, object]:
    """Send ``calls`` distinct requests at once; the generator keeps ``concurrency`` in flight."""
    import openai  # noqa: F401 - imported before the clock starts (about a second, once per process)

    from ragassay.plugins.openai_llm import OpenAIGenerator

    generator = OpenAIGenerator(
        OpenAIGenerator.Options(base_url=f"{url}/v1", concurrency=concurrency, timeout_s=30), context=context(cache_dir)
    )
    requests = [
        GenerationRequest(question=f"q{i}", messages=[{"role": "user", "content": f"question {i}"}])
        for i in range(calls)
    ]
    start = time.perf_counter()
    results = await asyncio.gather(*(generator.generate(r) for r in requests))
    wall = time.perf_counter() - start
    assert all(r.text == f"answer to question {i}" for i, r in enumerate(results))
    return wall, generator.client.stats


def remote(args: argparse.Namespace) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-not-a-real-key")
    ready, stop = multiprocessing.Queue(), multiprocessing.Event()
    child = multiprocessing.Process(target=serve, args=(args.latency_ms / 1000, ready, stop), daemon=True)
    child.start()
    url = ready.get(timeout=30)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            ideal = args.calls * args.latency_ms / 1000 / args.concurrency
            first, stats = asyncio.run(burst(url, Path(tmp), args.calls, args.concurrency))
            print(
                f"{args.calls} calls, {args.latency_ms:.0f} ms each, concurrency {args.concurrency}: "
                f"{first:.2f} s wall, ideal {ideal:.2f} s, ratio {first / ideal:.3f} (goal <= 1.15); "
                f"model calls {stats.calls}"
            )
            close_caches()  # the second run opens the cache afresh, as a new process would
            second, stats = asyncio.run(burst(url, Path(tmp), args.calls, args.concurrency))
            print(
                f"same {args.calls} calls, all cached: {second:.3f} s wall = {100 * second / first:.2f}% of the "
                f"first run (goal < 2%); model calls {stats.calls}, cache hits {stats.cache_hits}"
            )
            close_caches()
    finally:
        stop.set()
        child.join(timeout=10)


async def tokens_per_second(generator, prompts: list[str]) -> tuple[float, int, float]:
    requests = [GenerationRequest(question=p, messages=[{"role": "user", "content": p}]) for p in prompts]
    start = time.perf_counter()
    results = await asyncio.gather(*(generator.generate(r) for r in requests))
    wall = time.perf_counter() - start
    tokens = sum(r.usage.output_tokens for r in results)
    return tokens / wall, tokens, wall


def local(args: argparse.Namespace) -> None:
    from ragassay.plugins.local_llm import LocalGenerator
    from ragassay.plugins.local_llm import loader as hf_loader

    cache_dir = Path(args.model_cache)
    generator = LocalGenerator(
        LocalGenerator.Options(max_tokens=args.new_tokens, max_batch_size=8, batch_window_ms=20),
        context=context(cache_dir, cache=False),
    )
    start = time.perf_counter()
    generator.client.backend.loaded()
    import torch

    cached = "cached_s" in hf_loader.LOAD_TIMES
    how = "the dequantised-weights cache" if cached else "the GGUF file (first load; dequantised and cached)"
    load_s = hf_loader.LOAD_TIMES["cached_s" if cached else "gguf_s"]
    print(
        f"local SmolLM2-135M-Instruct: weights loaded from {how} in {load_s:.1f} s "
        f"({time.perf_counter() - start:.1f} s with imports); {torch.get_num_threads()} torch threads on "
        f"{os.cpu_count()} cores"
    )
    prompts = [f"Write a short paragraph about topic number {i}: rivers, salmon and bees." for i in range(8)]
    asyncio.run(tokens_per_second(generator, prompts[:1]))  # warm-up
    rate, tokens, wall = asyncio.run(tokens_per_second(generator, prompts[:1]))
    print(f"local single: {tokens} new tokens in {wall:.2f} s = {rate:.1f} tokens/s")
    rate, tokens, wall = asyncio.run(tokens_per_second(generator, prompts))
    batches = generator.client.backend.batcher.batches_run
    print(
        f"local batched (8 concurrent prompts): {tokens} new tokens in {wall:.2f} s = {rate:.1f} tokens/s "
        f"({batches} batches run so far)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--skip-local", action="store_true", help="Skip the local model measurement.")
    parser.add_argument("--new-tokens", type=int, default=32, help="New tokens per local prompt.")
    parser.add_argument(
        "--model-cache",
        default=str(Path(tempfile.gettempdir()) / "ragassay-bench-cache"),
        help="Cache folder for the dequantised local model (kept between runs).",
    )
    args = parser.parse_args()
    remote(args)
    if not args.skip_local:
        local(args)


if __name__ == "__main__":
    main()
