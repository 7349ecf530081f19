"""Retrieval benchmark: embedding throughput, query latency (FAISS flat / HNSW, rank-bm25), cache-hit readiness.

1. Embedding throughput (chunks/s) of the ``local`` embedder (all-MiniLM-L6-v2, CPU) on ``--chunks`` chunks of
   mixed length cut from the boolean-agent article set (``../shared/data/rag_dataset_gen``; generated text
   when absent): length-sorted batches vs naive fixed-order batches, same batch size.
2. Query latency (median, p95) at each of ``--sizes`` chunks for FAISS flat and HNSW (default options) over
   random unit 384-d vectors (MiniLM's size) scattered around 1,000 topic centres (embedding 100k chunks with
   MiniLM on CPU takes too long), with HNSW's recall@10 against flat; and for the ``bm25`` retriever
   (rank-bm25) over synthetic texts of Zipf-distributed words. Build times are printed too.
3. Time to a ready index with the real ``dense`` retriever (MiniLM, kenneweg chunks of the article set): first
   run (embed + build + store) vs a second run of the same config (cache hit). Goal (issue 5): >= 20x faster.

    python benchmarks/retrieval.py [--chunks 5000] [--sizes 10000,100000] [--queries 200] [--skip-throughput]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from ragassay.components import ComponentContext
from ragassay.models import Chunk, Document
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.bm25 import BM25Retriever
from ragassay.plugins.dense import LocalEmbedder
from ragassay.plugins.dense import faiss_index as fi
from ragassay.plugins.recursive_chunker import KennewegChunker

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "rag_dataset_gen"
DIM = 384


def articles() -> tuple[list[Document], str]:
    """The boolean-agent article set (A_f, then A_r_first300), or generated text when it is absent."""
    docs = []
    for name in ("A_f.jsonl", "A_r_first300.jsonl"):
        path = DATA / name
        if path.is_file():
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
                row = json.loads(line)
                docs.append(Document(id=f"{name}:{i}", title=row["title"], text=row["content"]))
    if docs:
        return docs, f"{len(docs)} Wikipedia articles from {DATA}"
    rng = np.random.default_rng(1)
    vocab = synthetic_vocabulary(5000)
    texts = [" ".join(rng.choice(vocab, size=int(rng.integers(300, 900)))) for _ in range(400)]
    return [Document(id=f"g{i}", title=f"Doc {i}", text=t) for i, t in enumerate(texts)], "generated text"


def synthetic_vocabulary(size: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return np.array(["".join(rng.choice(letters, size=int(rng.integers(3, 10)))) for _ in range(size)])


def mixed_chunks(docs: list[Document], count: int) -> list[str]:
    """``count`` pieces of the articles with lengths drawn from 40 to 1500 characters."""
    rng = np.random.default_rng(0)
    lengths = (40, 120, 300, 700, 1024, 1500)
    pieces, doc = [], 0
    while len(pieces) < count:
        text, start = docs[doc % len(docs)].text, 0
        while start < len(text) and len(pieces) < count:
            size = int(rng.choice(lengths))
            if text[start : start + size].strip():
                pieces.append(text[start : start + size])
            start += size
        doc += 1
    return pieces


def percentiles(samples: list[float]) -> tuple[float, float]:
    """Median and p95, in milliseconds."""
    ms = np.asarray(samples) * 1000
    return float(np.median(ms)), float(np.percentile(ms, 95))


def bench_throughput(docs: list[Document], count: int, batch_size: int, threads: int | None) -> dict:
    texts = mixed_chunks(docs, count)
    embedder = LocalEmbedder(LocalEmbedder.Options(batch_size=batch_size, threads=threads))
    embedder.encode(texts[:64])  # load the model and warm up
    result = {"chunks": len(texts), "mean_chars": statistics.mean(len(t) for t in texts)}
    for label, sort in (("length_sorted", True), ("fixed_order", False)):
        started = time.perf_counter()
        options = LocalEmbedder.Options(batch_size=batch_size, sort_by_length=sort, threads=threads)
        encoded = LocalEmbedder(options).encode(texts)
        elapsed = time.perf_counter() - started
        result[label] = {"seconds": elapsed, "chunks_per_s": len(texts) / elapsed, "truncated": encoded.truncated_count}
    result["speedup"] = result["length_sorted"]["chunks_per_s"] / result["fixed_order"]["chunks_per_s"]
    return result


def topic_vectors(size: int, rng: np.random.Generator, centres: int = 1000, spread: float = 0.05) -> np.ndarray:
    """``size`` unit vectors scattered around ``centres`` random topic centres (embeddings have topics)."""
    centre = rng.standard_normal((centres, DIM)).astype(np.float32)
    centre /= np.linalg.norm(centre, axis=1, keepdims=True)
    vectors = centre[rng.integers(0, centres, size)] + spread * rng.standard_normal((size, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def bench_faiss(size: int, queries: int) -> dict:
    rng = np.random.default_rng(size)
    vectors = topic_vectors(size, rng)
    probes = vectors[rng.choice(size, queries, replace=False)] + 0.05 * rng.standard_normal((queries, DIM)).astype(
        np.float32
    )
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    out, truth = {}, None
    for kind in ("flat", "hnsw"):
        opts = fi.IndexOptions(index=kind)
        started = time.perf_counter()
        index = fi.build(vectors, opts)
        build = time.perf_counter() - started
        latencies, found = [], []
        for probe in probes:
            started = time.perf_counter()
            _, ids = fi.search(index, probe[None, :], 10, opts)
            latencies.append(time.perf_counter() - started)
            found.append(ids[0])
        median, p95 = percentiles(latencies)
        out[kind] = {"build_s": build, "median_ms": median, "p95_ms": p95}
        if kind == "flat":
            truth = found
        else:
            out[kind]["recall_at_10"] = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, truth)]))
    return out


def bench_bm25(size: int, queries: int) -> dict:
    rng = np.random.default_rng(size + 1)
    vocab = synthetic_vocabulary(30000)
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    weights /= weights.sum()
    words = rng.choice(len(vocab), size=size * 100, p=weights)
    cuts = np.cumsum(rng.integers(40, 160, size=size))
    cuts = (cuts * (size * 100) / cuts[-1]).astype(int)
    chunks = [
        Chunk(id=f"s{i}", document_id=f"s{i}", text=" ".join(vocab[words[a:b]]))
        for i, (a, b) in enumerate(zip(np.r_[0, cuts[:-1]], cuts))
    ]
    retriever = BM25Retriever()
    started = time.perf_counter()
    retriever.index(chunks)
    build = time.perf_counter() - started
    latencies = []
    for _ in range(queries):
        query = " ".join(vocab[rng.choice(len(vocab), size=5, p=weights)])
        started = time.perf_counter()
        retriever.retrieve(query, 10)
        latencies.append(time.perf_counter() - started)
    median, p95 = percentiles(latencies)
    return {"build_s": build, "median_ms": median, "p95_ms": p95}


def bench_cache(docs: list[Document], articles_count: int, threads: int | None) -> dict:
    """Each index kind in its own empty cache: a first run (embed, build, store), then the same config again."""
    chunker = KennewegChunker()
    chunks = [c for doc in docs[:articles_count] for c in chunker.chunk(doc)]
    registry = load_plugins().registry
    embedder = {"name": "local", "options": {"threads": threads}}
    out: dict = {"chunks": len(chunks)}
    LocalEmbedder(LocalEmbedder.Options(threads=threads)).encode(["warm up"])  # builds timed with the model loaded
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("flat", "hnsw"):
            root = Path(tmp) / kind
            context = ComponentContext(project_dir=root, cache_dir=root / "cache", registry=registry)
            times = []
            for _ in range(2):
                options = {"index": kind, "embedder": embedder}
                retriever = context.build("retriever", {"name": "dense", "options": options})
                started = time.perf_counter()
                retriever.index(chunks)
                times.append((time.perf_counter() - started, retriever.stats["cache"]))
            out[kind] = {
                "build_s": times[0][0],
                "hit_s": times[1][0],
                "first": times[0][1],
                "second": times[1][1],
                "speedup": times[0][0] / times[1][0],
            }
        latencies = []
        for doc in docs[:50]:  # end to end: embed the question with MiniLM, then search
            started = time.perf_counter()
            retriever.retrieve(f"What is known about {doc.title}?", 5)
            latencies.append(time.perf_counter() - started)
        out["query_median_ms"], out["query_p95_ms"] = percentiles(latencies)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=5000, help="chunks for the embedding throughput")
    parser.add_argument("--batch-size", type=int, default=32, help="embedding batch size")
    parser.add_argument("--sizes", default="10000,100000", help="corpus sizes for query latency")
    parser.add_argument("--queries", type=int, default=200, help="queries per latency measurement")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's, one per core)")
    parser.add_argument("--cache-articles", type=int, default=128, help="articles embedded for the cache-hit part")
    parser.add_argument("--skip-throughput", action="store_true", help="skip the (slow) embedding throughput")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    docs, source = articles()
    report: dict = {"source": source}
    import torch

    print(f"corpus: {source}; torch threads: {args.threads or torch.get_num_threads()}")
    if not args.skip_throughput:
        t = bench_throughput(docs, args.chunks, args.batch_size, args.threads)
        report["throughput"] = t
        print(
            f"\n1. embedding throughput, all-MiniLM-L6-v2 on CPU, {t['chunks']} chunks of mixed length "
            f"(mean {t['mean_chars']:.0f} chars), batch size {args.batch_size}"
        )
        for label in ("length_sorted", "fixed_order"):
            r = t[label]
            print(
                f"   {label:14s} {r['chunks_per_s']:7.1f} chunks/s  ({r['seconds']:.1f} s, {r['truncated']} truncated)"
            )
        print(f"   length-sorted batching is {t['speedup']:.2f}x faster")
    print(
        "\n2. query latency, top-10, one query at a time (FAISS over random unit 384-d vectors around 1,000 "
        "topic centres, not MiniLM embeddings; BM25 over synthetic Zipf texts)"
    )
    report["latency"] = {}
    for size in (int(s) for s in args.sizes.split(",")):
        faiss_figures, bm25 = bench_faiss(size, args.queries), bench_bm25(size, min(args.queries, 100))
        report["latency"][size] = {**faiss_figures, "bm25": bm25}
        for name, r in (("flat", faiss_figures["flat"]), ("hnsw", faiss_figures["hnsw"]), ("bm25", bm25)):
            extra = f", recall@10 vs flat {r['recall_at_10']:.3f}" if "recall_at_10" in r else ""
            print(
                f"   {size:>7} chunks  {name:5s} median {r['median_ms']:8.3f} ms  p95 {r['p95_ms']:8.3f} ms  "
                f"(build {r['build_s']:.1f} s{extra})"
            )
    c = bench_cache(docs, args.cache_articles, args.threads)
    report["cache"] = c
    print(f"\n3. time to a ready dense index, MiniLM, {c['chunks']} kenneweg chunks of the article set")
    for kind in ("flat", "hnsw"):
        r = c[kind]
        print(
            f"   {kind:5s} first run {r['build_s']:7.2f} s ({r['first']}), second run {r['hit_s']:.3f} s "
            f"({r['second']}): {r['speedup']:.0f}x faster (goal >= 20x)"
        )
    print(
        f"   dense retrieve() end to end (MiniLM query embedding + HNSW search, top-5): median "
        f"{c['query_median_ms']:.1f} ms, p95 {c['query_p95_ms']:.1f} ms"
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
