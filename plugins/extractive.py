"""The ``extractive`` generator: answers with the context sentence(s) that best match the question.

No model is involved, so it is deterministic and free: a baseline reader, and a way to evaluate retrieval
end to end without an LLM. A sentence scores the sum, over the distinct non-stop-word question words it
contains, of their smoothed IDF over the candidate sentences: ``idf(w) = ln((1 + N) / (1 + df(w))) + 1``.
Equal scores prefer the higher-ranked context, then the earlier sentence.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Generation, GenerationRequest, Generator, TokenUsage, hookimpl, sentences, words

_TITLE_LINE = re.compile(r"\ATitle: [^\n]*\n")
_SCORES_KEPT = 5


@dataclass(frozen=True)
class _Candidate:
    """One sentence of one context: where it is and its distinct words."""

    context_rank: int
    position: int
    context_id: str
    text: str
    words: frozenset[str]


class ExtractiveGenerator(Generator):
    """Answers with the context sentence that shares the most informative words with the question."""

    name = "extractive"

    class Options(BaseModel):
        """Options of the extractive generator."""

        model_config = ConfigDict(extra="forbid")

        max_sentences: int = Field(1, ge=1, description="Answer with up to this many best sentences, in text order.")
        fallback: str = Field(
            "I don't know.", description="Answer given when there is no context or no sentence shares a word."
        )

    async def generate(self, request: GenerationRequest) -> Generation:
        """Pick the best sentence(s) of ``request.contexts`` for ``request.question``."""
        candidates = _candidates(request)
        query = _query_words(request.question)
        scored = _score(candidates, query)
        best = [(score, cand) for score, cand in scored if score > 0][: self.options.max_sentences]
        top = [
            {"context_id": cand.context_id, "sentence": cand.text, "score": round(score, 6)}
            for score, cand in scored[:_SCORES_KEPT]
            if score > 0
        ]
        if not best:
            raw = {"context_id": None, "sentence_scores": top, "fallback": True}
            return Generation(text=self.options.fallback, usage=TokenUsage(), raw=raw)
        in_order = sorted((cand for _, cand in best), key=lambda c: (c.context_rank, c.position))
        text = " ".join(cand.text for cand in in_order)
        raw = {"context_id": best[0][1].context_id, "sentence_scores": top}
        return Generation(text=text, usage=TokenUsage(), raw=raw)


def _candidates(request: GenerationRequest) -> list[_Candidate]:
    """Every sentence of every context, in rank order, with a leading 'Title: ...' line removed."""
    found = []
    for rank, chunk in enumerate(request.contexts):
        body = _TITLE_LINE.sub("", chunk.text, count=1)
        for position, sentence in enumerate(sentences(body)):
            tokens = frozenset(words(sentence))
            found.append(_Candidate(rank, position, chunk.id, sentence, tokens))
    return found


def _query_words(question: str) -> set[str]:
    """Distinct non-stop-word question words (a question of stop words only gets the fallback)."""
    return set(words(question, drop_stopwords=True))


def _score(candidates: list[_Candidate], query: set[str]) -> list[tuple[float, _Candidate]]:
    """Candidates with their IDF-weighted overlap scores, best first (ties: context rank, position)."""
    df = Counter(word for cand in candidates for word in cand.words & query)
    total = len(candidates)
    idf = {word: math.log((1 + total) / (1 + count)) + 1 for word, count in df.items()}
    # fsum over the words in sorted order: the same score whatever the set iteration order (hash seed)
    scored = [(math.fsum(idf[word] for word in sorted(cand.words & query)), cand) for cand in candidates]
    return sorted(scored, key=lambda item: (-item[0], item[1].context_rank, item[1].position))


@hookimpl
def register_generators(register):
    """Register the extractive generator."""
    register(ExtractiveGenerator)
