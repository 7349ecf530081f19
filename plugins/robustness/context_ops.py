"""Context operators: distractors, a dropped gold chunk, reordering, truncation.

Each is a pure function of a :class:`~ragassay.plugins.robustness.base.Case`; all randomness comes from the case's
seeded generator. What each tells you:

- ``distractors`` (``k``, ``mode = "random" | "hard"``, ``position``): k extra chunks that are not gold, drawn at
  random from the corpus or the top-ranked non-gold chunks for the question by a retriever (``bm25``: hard
  negatives). Noise sensitivity (RAGChecker, RAGAS): does the answer change because of irrelevant context?
- ``drop_gold``: every gold chunk removed from the retrieved chunks. Answerability: does the system say the
  documents do not hold the answer, or make one up?
- ``reorder`` (``gold = "first" | "middle" | "last"``): the gold chunks moved to that position, the others kept
  in order. Lost in the middle (Liu et al. 2023, "Lost in the Middle: How Language Models Use Long Contexts").
- ``truncate`` (``tokens``, ``per = "chunk" | "all"``): each chunk (or the chunks together) cut after N
  whitespace tokens. How much of the context does the system need?
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Chunk, ComponentContext, RetrieverRef

from .base import Case, Operator, Outcome, register_operator


class DistractorOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    k: int = Field(1, ge=1, le=100, description="Number of distractor chunks added.")
    mode: Literal["random", "hard"] = Field(
        "random", description="'random': chunks drawn from the corpus; 'hard': the top-ranked non-gold chunks."
    )
    position: Literal["end", "start", "random"] = Field(
        "end", description="Where the distractors go: after the retrieved chunks, before them, or each at random."
    )
    retriever: RetrieverRef = Field(
        RetrieverRef(name="bm25"), description="Ranks the corpus for hard negatives (mode 'hard')."
    )


@register_operator
class Distractors(Operator):
    """Add k non-gold chunks: random ones from the corpus, or hard negatives (top-ranked non-gold)."""

    name = "distractors"
    Options = DistractorOptions

    def prepare(self, chunks: Sequence[Chunk], context: ComponentContext) -> None:
        self.corpus = list(chunks)
        self.ranker = None
        if self.options.mode == "hard" and self.corpus:
            self.ranker = context.build(self.options.retriever)
            self.ranker.index(self.corpus)

    def apply(self, case: Case) -> Outcome:
        present = {c.id for c in case.chunks}
        extra = self._hard(case, present) if self.options.mode == "hard" else self._random(case, present)
        if not extra:
            reason = "no non-gold chunk to add"
            if self.options.mode == "hard" and getattr(self, "corpus", None):
                reason = "the retriever ranks no non-gold chunk for the question (no term in common?)"
            return Outcome(False, list(case.chunks), details={"reason": reason, "added": []})
        chunks = list(case.chunks)
        for chunk in extra:
            if self.options.position == "start":
                chunks.insert(0, chunk)
            elif self.options.position == "random":
                chunks.insert(case.rng.randrange(len(chunks) + 1), chunk)
            else:
                chunks.append(chunk)
        return Outcome(True, chunks, details={"added": [c.id for c in extra]})

    def _random(self, case: Case, present: set[str]) -> list[Chunk]:
        corpus, k = getattr(self, "corpus", []), self.options.k
        draw = case.rng.sample(range(len(corpus)), min(len(corpus), k + len(present) + 8))
        picked = [corpus[i] for i in draw if corpus[i].id not in present and not case.is_gold(corpus[i])]
        if len(picked) < k and len(draw) < len(corpus):  # many excluded: draw from the whole rest
            rest = [c for c in corpus if c.id not in present and not case.is_gold(c)]
            picked = case.rng.sample(rest, min(k, len(rest)))
        return picked[:k]

    def _hard(self, case: Case, present: set[str]) -> list[Chunk]:
        if self.ranker is None:
            return []
        depth = self.options.k + len(present) + len(case.sample.reference_context_ids) + 8
        hits = self.ranker.retrieve(case.sample.question, min(depth, len(self.corpus)))
        ranked = [h.chunk for h in hits if h.chunk.id not in present and not case.is_gold(h.chunk)]
        return ranked[: self.options.k]


@register_operator
class DropGold(Operator):
    """Remove every gold chunk from the retrieved chunks (is the question then refused?)."""

    name = "drop_gold"
    empties_contexts = True  # a sample whose retrieved chunks were all gold is left with none: that is the point

    def apply(self, case: Case) -> Outcome:
        kept = [c for c in case.chunks if not case.is_gold(c)]
        dropped = [c.id for c in case.chunks if case.is_gold(c)]
        reason = {} if dropped else {"reason": "no gold chunk among the retrieved chunks"}
        return Outcome(bool(dropped), kept, details={"dropped": dropped, **reason})


class ReorderOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gold: Literal["first", "middle", "last"] = Field(description="Where the gold chunks are moved to.")


@register_operator
class Reorder(Operator):
    """Move the gold chunks first, to the middle or last; the other chunks keep their order."""

    name = "reorder"
    Options = ReorderOptions

    def apply(self, case: Case) -> Outcome:
        gold = [c for c in case.chunks if case.is_gold(c)]
        rest = [c for c in case.chunks if not case.is_gold(c)]
        at = {"first": 0, "middle": len(rest) // 2, "last": len(rest)}[self.options.gold]
        chunks = rest[:at] + gold + rest[at:]
        reason = {} if gold else {"reason": "no gold chunk among the retrieved chunks"}
        changed = [c.id for c in chunks] != [c.id for c in case.chunks]
        return Outcome(changed, chunks, details={"gold_positions": [chunks.index(g) for g in gold], **reason})


class TruncateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens: int = Field(ge=0, le=1_000_000, description="Whitespace tokens kept.")
    per: Literal["chunk", "all"] = Field(
        "chunk", description="'chunk': each chunk keeps N tokens; 'all': the chunks together, in order."
    )


_TOKEN = re.compile(r"\S+")


def cut(text: str, tokens: int) -> tuple[str, int]:
    """``text`` up to the end of its ``tokens``-th whitespace token, and the tokens it had in all."""
    ends = [m.end() for m in _TOKEN.finditer(text)]
    if len(ends) <= tokens:
        return text, len(ends)
    return (text[: ends[tokens - 1]] if tokens else ""), len(ends)


@register_operator
class Truncate(Operator):
    """Cut each chunk (or all the chunks together) after N whitespace tokens."""

    name = "truncate"
    Options = TruncateOptions

    def apply(self, case: Case) -> Outcome:
        budget, chunks, cut_ids = self.options.tokens, [], []
        for chunk in case.chunks:
            text, had = cut(chunk.text, budget)
            if self.options.per == "all":
                budget = max(0, budget - had)
            if text != chunk.text:
                cut_ids.append(chunk.id)
                chunk = chunk.model_copy(update={"text": text})
            chunks.append(chunk)
        return Outcome(bool(cut_ids), chunks, details={"truncated": cut_ids})
