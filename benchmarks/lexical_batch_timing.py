"""How long :func:`ragassay.unitxt.lexical_batch.pair_overlaps` takes on benchmark-shaped data.

``python benchmarks/lexical_batch_timing.py [N_SAMPLES] [REPEATS]`` builds ``N_SAMPLES`` samples (default
100,000) of the shape of issue 12's benchmark and prints the seconds from Python strings to the three count
arrays (best of ``REPEATS``). Each sample has an answer of about 20 words, a question of about 10, 1 or 2
references of about 20 and 3 contexts of about 60, every text drawn on its own (no context is shared between
samples); words come from a 50,000-word vocabulary with Zipf frequencies, some capitalised, some followed by a
comma, each text ending with a full stop. Pairs: answer × each reference, answer × each context,
answer × question, question × each context.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

from ragassay.unitxt.lexical_batch import pair_overlaps


@dataclasses.dataclass(frozen=True)
class Batch:
    """Benchmark texts and the (prediction, reference) pairs over them."""

    texts: list[str]
    pred: np.ndarray
    ref: np.ndarray


def benchmark_batch(n_samples: int, seed: int = 0) -> Batch:
    """Deterministic benchmark-shaped texts and pairs for ``n_samples`` samples (see the module docstring)."""
    rng = np.random.default_rng(seed)
    vocabulary = _vocabulary(rng, 50_000)
    weights = 1.0 / np.arange(1, len(vocabulary) + 1) ** 1.05
    reference_counts = rng.integers(1, 3, n_samples)
    lengths = {"answer": 20, "question": 10, "context": 60, "reference": 20}
    counts = {"answer": n_samples, "question": n_samples, "context": 3 * n_samples}
    counts["reference"] = int(reference_counts.sum())
    texts, first = [], {}
    for kind, count in counts.items():
        first[kind] = len(texts)
        texts.extend(_texts(rng, vocabulary, weights / weights.sum(), count, lengths[kind]))
    sample = np.arange(n_samples)
    answer, question = first["answer"] + sample, first["question"] + sample
    context = first["context"] + 3 * sample[:, None] + np.arange(3)
    reference = first["reference"] + np.arange(counts["reference"])
    reference_owner = np.repeat(sample, reference_counts)
    pred = [answer[reference_owner], np.repeat(answer, 3), answer, np.repeat(question, 3)]
    ref = [reference, context.ravel(), question, context.ravel()]
    return Batch(texts, np.concatenate(pred), np.concatenate(ref))


def _vocabulary(rng: np.random.Generator, size: int) -> np.ndarray:
    letters = np.frombuffer(b"etaoinshrdlcumwfgypbvkjxqz", dtype=np.uint8)
    frequency = np.array([127, 91, 82, 75, 70, 67, 63, 61, 60, 43, 40, 28, 28, 24, 24, 22, 20, 20, 19, 15, 10, 8])
    frequency = np.concatenate([frequency, [2, 2, 1, 1]]) / np.concatenate([frequency, [2, 2, 1, 1]]).sum()
    lengths = np.clip(rng.poisson(6, size), 1, 20)
    chars = letters[rng.choice(len(letters), int(lengths.sum()), p=frequency)].tobytes().decode("ascii")
    ends = np.cumsum(lengths)
    words = [chars[end - length : end] for end, length in zip(ends.tolist(), lengths.tolist())]
    words[:12] = ["the", "a", "an", "of", "and", "to", "in", "is", "was", "for", "on", "with"]
    return np.array(words, dtype=object)


def _texts(rng: np.random.Generator, vocabulary, weights, count: int, mean_words: int) -> list[str]:
    words_per_text = np.maximum(1, rng.poisson(mean_words, count))
    words = vocabulary[rng.choice(len(vocabulary), int(words_per_text.sum()), p=weights)]
    style = rng.random(len(words))
    capital, comma = style < 0.05, style > 0.95
    words[capital] = [word.capitalize() for word in words[capital]]
    words[comma] = [word + "," for word in words[comma]]
    ends = np.cumsum(words_per_text)
    return [" ".join(words[end - n : end]) + "." for end, n in zip(ends.tolist(), words_per_text.tolist())]


def timing(n_samples: int = 100_000, repeats: int = 3) -> float:
    """Best wall time in seconds of :func:`pair_overlaps` over ``n_samples`` benchmark samples (printed too)."""
    batch = benchmark_batch(n_samples)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        pair_overlaps(batch.texts, batch.pred, batch.ref)
        best = min(best, time.perf_counter() - start)
    print(f"{n_samples} samples, {len(batch.texts)} texts, {len(batch.pred)} pairs: best of {repeats} {best:.2f} s")
    return best


if __name__ == "__main__":
    timing(*(int(arg) for arg in sys.argv[1:3]))
