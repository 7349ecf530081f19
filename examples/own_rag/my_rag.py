"""A toy RAG standing in for yours: keyword retrieval over corpus/ and the best-matching sentence as answer.

ragassay's ``python`` adapter calls :func:`answer` once per question (``callable = "my_rag:answer"``).
"""

from __future__ import annotations

import re
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"
WORD = re.compile(r"[a-z0-9:]+")


def _words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def _documents() -> dict[str, str]:
    """Document id -> text; ids are paths relative to this folder, as ragassay forms corpus ids."""
    return {f"corpus/{path.name}": path.read_text(encoding="utf-8") for path in sorted(CORPUS.glob("*.md"))}


def retrieve(question: str, top_k: int = 2) -> list[tuple[str, str]]:
    """The top_k (id, text) documents sharing the most words with the question (ties by id)."""
    asked = _words(question)
    ranked = sorted(_documents().items(), key=lambda item: (-len(asked & _words(item[1])), item[0]))
    return ranked[:top_k]


def answer(question: str) -> dict:
    """Answer one question: the retrieved contexts with their ids, and the sentence that shares most words."""
    contexts = retrieve(question)
    asked = _words(question)
    body = " ".join(line for _, text in contexts for line in text.splitlines() if not line.startswith("#"))
    sentences = [s.strip() for s in re.split(r"(?<=\.)\s+", body) if s.strip()]
    best = max(sentences, key=lambda s: len(asked & _words(s)), default="")
    return {
        "answer": best,
        "contexts": [text for _, text in contexts],
        "context_ids": [doc_id for doc_id, _ in contexts],
        "retrieved": True,
    }


def answer_only(question: str) -> str:
    """The same answer without its contexts: what a callable that forgets them gives ragassay."""
    return answer(question)["answer"]
