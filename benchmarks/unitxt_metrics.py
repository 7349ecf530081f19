"""Unitxt's RAG metrics at scale: ragassay vs the unitxt package on the same 100,000 samples.

    python benchmarks/unitxt_metrics.py                     # ragassay, + unitxt if its venv exists
    python benchmarks/unitxt_metrics.py --install-unitxt    # first creates .bench/unitxt-venv (unitxt==1.26.10)

1. Builds N samples (default 100,000; deterministic): a ~10-word question, an answer of ~20 words, 3 contexts of
   ~60 words (unique per sample: no repeated context flatters a cache), 1-2 references of ~10 words, 3 retrieved
   ids and 1-2 reference ids; written as a Unitxt RAG JSONL file.
2. ragassay: the six lexical metrics (``ragassay.unitxt.scoring.score_records``: token recall, K-precision,
   answer and context relevance, MRR, MAP) with Unitxt's 95% BCa bootstrap intervals (1000 resamples, seed 42),
   from records in memory. Goal: under 5 s in total. Reading the file is timed separately.
3. unitxt 1.26 (in its own venv: it is not a ragassay dependency; skipped with the install command printed when
   absent): the same metrics through Unitxt's catalog on all N samples with intervals off (Unitxt's BCa jackknife
   is O(N^2)), then with intervals on at growing sizes to measure that growth; prints the mean absolute
   difference of instance scores per metric (goal 0), the interval differences, and the time ratio.
4. Perplexity context relevance with the local model (SmolLM2) on 500 question-context pairs: pairs/s batched vs
   one by one (``benchmarks/perplexity_pairs.py``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".bench"
UNITXT_VENV = WORK / "unitxt-venv"
UNITXT_VERSION = "1.26.10"
INSTALL = f"python -m venv {UNITXT_VENV} && {UNITXT_VENV}/bin/pip install unitxt=={UNITXT_VERSION}"


def vocabulary(rng: np.random.Generator, size: int = 20000) -> np.ndarray:
    """Random lower-case words with Zipf frequencies; the most frequent are English function words, some
    capitalised or punctuated; a few non-ASCII words (accents, a curly apostrophe, a dash) sit at ranks 200-210,
    so about a tenth of the texts hold one, as in English web text."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, rng.integers(2, 10))) for _ in range(size)]
    words[:38] = "the a an of and to in is for on that with as by it was at be are from or this U.S. 2024".split() + [
        "don't", "well-known", "e.g.", "10,000", "policy,", "days.", "What", "How", "The", "A", "It's", "(see",
        "below)",
    ]  # fmt: skip
    words[200:208] = ["café", "naïve", "résumé", "İstanbul", "don’t", "—", "“quoted”", "Zürich"]
    return np.array(words, dtype=object)


def make_records(n: int, seed: int = 7) -> list[dict]:
    rng = np.random.default_rng(seed)
    vocab = vocabulary(rng)
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    weights /= weights.sum()
    words = iter(rng.choice(vocab, size=n * 240, p=weights))

    def text(length: int) -> str:
        return " ".join(next(words) for _ in range(length))

    records = []
    for i in range(n):
        ids = [f"doc{x}" for x in rng.integers(0, 5000, 3)]
        records.append(
            {
                "question": text(int(rng.integers(8, 13))) + "?",
                "question_id": f"q{i}",
                "answer": text(int(rng.integers(16, 25))) + ".",
                "contexts": [text(int(rng.integers(50, 71))) for _ in range(3)],
                "contexts_ids": ids,
                "reference_answers": [text(int(rng.integers(6, 14))) for _ in range(int(rng.integers(1, 3)))],
                "reference_context_ids": list(dict.fromkeys([ids[0] if rng.random() < 0.5 else "doc-x", "doc-y"]))[
                    : int(rng.integers(1, 3))
                ],
            }
        )
    return records


def write_jsonl(path: Path, records: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def time_ragassay(path: Path, repeats: int = 3) -> tuple[dict, object, list]:
    from ragassay.unitxt import read_unitxt
    from ragassay.unitxt.scoring import METRIC_NAMES, score_records

    started = time.perf_counter()
    records = read_unitxt(path)
    read_s = time.perf_counter() - started
    times, scores = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        scores = score_records(records, METRIC_NAMES)
        times.append(time.perf_counter() - started)
    started = time.perf_counter()
    score_records(records, METRIC_NAMES, intervals=None)
    no_ci_s = time.perf_counter() - started
    return {"read_s": read_s, "first_s": times[0], "best_s": min(times), "no_ci_s": no_ci_s}, scores, records


def unitxt_python(args) -> Path | None:
    if args.unitxt_python:
        return Path(args.unitxt_python)
    python = UNITXT_VENV / "bin" / "python"
    if not python.exists() and args.install_unitxt:
        print(f"installing unitxt {UNITXT_VERSION} into {UNITXT_VENV} ...", flush=True)
        shutil.rmtree(UNITXT_VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(UNITXT_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"unitxt=={UNITXT_VERSION}"], check=True)
    return python if python.exists() else None


def run_unitxt(python: Path, data: Path, resamples: int, limit: int | None = None, metrics: str | None = None) -> dict:
    out = WORK / f"unitxt-{resamples}-{limit}.json"
    command = [str(python), str(HERE / "unitxt_side.py"), str(data), str(out), "--resamples", str(resamples)]
    command += ["--limit", str(limit)] if limit else []
    command += ["--metrics", metrics] if metrics else []
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads(out.read_text())


def compare_with_unitxt(python: Path, data: Path, scores, records, ours_s: float, ci_sizes: list[int]) -> None:
    from ragassay.unitxt.scoring import score_records

    full = run_unitxt(python, data, resamples=0)
    unitxt_s = sum(m["seconds"] for m in full["metrics"].values())
    print(f"\nunitxt {UNITXT_VERSION}, {full['n']:,} samples, intervals off: {unitxt_s:.1f} s")
    print(f"  {'metric':36s} {'seconds':>8s} {'mean abs diff':>14s} {'max abs diff':>13s}")
    for j, name in enumerate(scores.names):
        theirs = np.array(full["metrics"][name]["instances"])
        diff = np.abs(scores.values[:, j] - theirs)
        seconds = full["metrics"][name]["seconds"]
        print(f"  {name:36s} {seconds:8.1f} {diff.mean():14.2e} {diff.max():13.2e}")
    growth = []
    for size in ci_sizes:
        with_ci = run_unitxt(python, data, resamples=1000, limit=size, metrics="token_recall")
        without = run_unitxt(python, data, resamples=0, limit=size, metrics="token_recall")
        ci_s = with_ci["metrics"]["token_recall"]["seconds"] - without["metrics"]["token_recall"]["seconds"]
        ours = score_records(records[:size], ["token_recall"]).intervals[0]
        theirs = with_ci["metrics"]["token_recall"]
        gap = max(abs(ours.ci_low - theirs["ci_low"]), abs(ours.ci_high - theirs["ci_high"]))
        growth.append((size, ci_s))
        print(f"  unitxt interval of token_recall at n={size:,}: {ci_s:.1f} s; |ragassay - unitxt| bounds: {gap:.1e}")
    n = full["n"]
    if len(growth) >= 2:
        sizes, seconds = np.array(growth, dtype=float).T
        (a, b), *_ = np.linalg.lstsq(np.column_stack([sizes**2, sizes]), seconds, rcond=None)  # s ~ a n^2 + b n
        per_metric = max(float(a * n**2 + b * n), 0.0)
        print(
            f"  fitted unitxt interval time ~ {a:.2e} n^2 + {b:.2e} n s: "
            f"{per_metric / 3600:.2f} h per metric at n={n:,}"
        )
        total = unitxt_s + per_metric * len(scores.names)
        print(f"  unitxt with intervals (measured scores + fitted intervals): ~{total / 3600:.2f} h")
        print(f"  ratio unitxt / ragassay: {total / ours_s:,.0f}x (scores alone: {unitxt_s / ours_s:,.0f}x)")
    else:
        print(f"  ratio unitxt (scores only, intervals off) / ragassay (with intervals): {unitxt_s / ours_s:,.0f}x")


def perplexity(pairs: int) -> None:
    sys.path.insert(0, str(HERE))
    try:
        import perplexity_pairs
    except ImportError as exc:  # the local model extra is missing
        print(f"\nperplexity: skipped ({exc})")
        return
    figures = perplexity_pairs.measure(pairs, model_cache=WORK / "model-cache")
    print(f"\nperplexity context relevance, local model, {pairs} question-context pairs:")
    for key, value in figures.items():
        print(f"  {key}: {value}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--unitxt-python", help="A Python with unitxt installed (default: .bench/unitxt-venv).")
    parser.add_argument("--install-unitxt", action="store_true", help=f"Create .bench/unitxt-venv ({UNITXT_VERSION}).")
    parser.add_argument("--skip-unitxt", action="store_true")
    parser.add_argument("--ci-sizes", default="1000,2000,4000", help="Sizes at which unitxt's interval is timed.")
    parser.add_argument("--pairs", type=int, default=500, help="Question-context pairs for perplexity (0: skip).")
    args = parser.parse_args(argv)

    WORK.mkdir(exist_ok=True)
    data = WORK / f"unitxt-{args.samples}.jsonl"
    records = make_records(args.samples)
    write_jsonl(data, records)
    del records
    timing, scores, parsed = time_ragassay(data)
    print(f"ragassay, {args.samples:,} samples, 6 lexical metrics + 95% BCa intervals (1000 resamples):")
    print(f"  first run {timing['first_s']:.2f} s, best of 3 {timing['best_s']:.2f} s (goal < 5 s)")
    print(f"  without intervals {timing['no_ci_s']:.2f} s; reading the JSONL file {timing['read_s']:.2f} s")
    for j, name in enumerate(scores.names):
        interval = scores.intervals[j]
        print(f"  {name:36s} {interval.mean:.4f} [{interval.ci_low:.4f}, {interval.ci_high:.4f}]")
    if not args.skip_unitxt:
        python = unitxt_python(args)
        if python is None:
            print(f"\nunitxt: skipped (not installed). Install it with:\n  {INSTALL}\nor pass --install-unitxt.")
        else:
            sizes = [int(x) for x in args.ci_sizes.split(",") if x]
            compare_with_unitxt(python, data, scores, parsed, timing["best_s"], sizes)
    if args.pairs:
        perplexity(args.pairs)


if __name__ == "__main__":
    main()
