"""Perplexity context relevance with the packaged SmolLM2 on question-context pairs: batched vs one by one.

Builds deterministic pairs from the Aurp corpus (``examples/aurp/corpus``): contexts of 60-120 words cut from
the documents, questions of 8-14 words naming what one of the contexts is about (half the pairs get their own
context, half another one). Scores every pair with :func:`ragassay.plugins.local_llm.score_pairs` one by one
(batch size 1) and batched (length-sorted, default batch size 8), and prints pairs/s of each and the largest
absolute difference between the two score lists (float rounding only; the goal is below 1e-5).

    python benchmarks/perplexity_pairs.py [--pairs 500] [--batch-size 8] [--threads N] [--model-cache DIR]

``measure(...)`` returns the figures as a dict (used by ``benchmarks/unitxt_metrics.py``).
"""

from __future__ import annotations

import argparse
import random
import re
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "examples" / "aurp" / "corpus"
STARTS = ["What does the report say about", "Which details are given on", "What is known about", "Who is behind"]


def build_pairs(count: int = 500, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` (context, question) pairs from the Aurp corpus, the same for the same ``count`` and ``seed``."""
    contexts = corpus_contexts()
    rng = random.Random(seed)
    pairs = []
    for index in range(count):
        own = contexts[index % len(contexts)]
        words = re.findall(r"[A-Za-z][A-Za-z-]+", own)
        start = rng.randrange(max(1, len(words) - 8))
        topic = " ".join(words[start : start + rng.randint(4, 8)])
        question = f"{rng.choice(STARTS)} {topic}?"
        context = own if index % 2 == 0 else contexts[rng.randrange(len(contexts))]
        pairs.append((context, question))
    return pairs


def corpus_contexts(low: int = 60, high: int = 120) -> list[str]:
    """Runs of whole sentences of ``low``-``high`` words (lengths drawn with a fixed seed), cut from the corpus
    documents read in file order."""
    sentences = []
    for path in sorted(CORPUS.rglob("*.md")):
        text = " ".join(line for line in path.read_text("utf-8").splitlines() if line and not line.startswith("#"))
        sentences += [s for s in re.split(r"(?<=[.!?])\s+", text) if s]
    rng = random.Random(1)
    contexts, current, wanted = [], [], rng.randint(low, high)
    for sentence in sentences:
        current += sentence.split()
        if len(current) >= wanted:
            contexts.append(" ".join(current[:high]))
            current, wanted = [], rng.randint(low, high)
    if not contexts:
        raise SystemExit(f"no text found under {CORPUS}")
    return contexts


def measure(pairs: int = 500, batch_size: int = 8, threads: int | None = None, model_cache: Path | None = None):
    """Load the packaged SmolLM2 and score ``pairs`` pairs one by one and batched; returns the figures."""
    import torch

    from ragassay.plugins.local_llm.loader import load, resolve_source, set_threads
    from ragassay.plugins.local_llm.perplexity import score_pairs
    from ragassay.plugins.local_llm.relevance import DEFAULT_TEMPLATE

    set_threads(threads)
    start = time.perf_counter()
    loaded = load(resolve_source(None), "causal", "float32", model_cache)
    load_s = time.perf_counter() - start
    data = build_pairs(pairs)
    sources = [DEFAULT_TEMPLATE.replace("{context}", context) for context, _ in data]
    questions = [question for _, question in data]
    figures: dict[str, Any] = {"pairs": pairs, "batch_size": batch_size, "threads": torch.get_num_threads()}
    figures["load_s"] = load_s
    scores = {}
    for label, size in (("one_by_one", 1), ("batched", batch_size)):
        start = time.perf_counter()
        with torch.inference_mode():
            scores[label] = score_pairs(loaded.model, loaded.tokenizer, sources, questions, size)
        seconds = time.perf_counter() - start
        figures[f"{label}_s"], figures[f"{label}_pairs_per_s"] = seconds, pairs / seconds
    figures["speedup"] = figures["batched_pairs_per_s"] / figures["one_by_one_pairs_per_s"]
    figures["max_abs_diff"] = max(abs(a - b) for a, b in zip(scores["one_by_one"], scores["batched"]))
    own = [s for i, s in enumerate(scores["batched"]) if i % 2 == 0]
    other = [s for i, s in enumerate(scores["batched"]) if i % 2 == 1]
    figures["mean_score_own_context"], figures["mean_score_other_context"] = (
        sum(own) / len(own),
        sum(other) / len(other),
    )
    return figures


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all cores but one)")
    parser.add_argument("--model-cache", type=Path, default=Path(".ragassay-cache"), help="dequantised weights")
    args = parser.parse_args(argv)
    f = measure(args.pairs, args.batch_size, args.threads, args.model_cache)
    print(f"SmolLM2-135M-Instruct, {f['threads']} torch threads, {f['pairs']} pairs (loaded in {f['load_s']:.1f} s)")
    print(f"one by one: {f['one_by_one_s']:.1f} s = {f['one_by_one_pairs_per_s']:.1f} pairs/s")
    print(
        f"batched ({f['batch_size']}, length-sorted): {f['batched_s']:.1f} s = {f['batched_pairs_per_s']:.1f} "
        f"pairs/s ({f['speedup']:.2f}x)"
    )
    print(f"max |batched - one by one| = {f['max_abs_diff']:.2e}")
    print(
        f"mean score: question with its own context {f['mean_score_own_context']:.4f}, "
        f"with another context {f['mean_score_other_context']:.4f}"
    )
    return f


if __name__ == "__main__":
    main()
