"""The ``counterfactual`` operator: the gold chunk rewritten with a changed value, and the answer it now implies.

For a GRAMMAR sample (it carries its ``sql``, the ``source_rows`` its answer came from and its ``table``) the new
value and the new answer come from the database: another value of the answer's column, set on the source row
(in a rolled-back savepoint of an in-memory copy), must change the SQL answer; the new answer is the SQL answer on
the changed row. Other samples use a declared swap (``swaps``: answer text -> replacement) or, for a numeric
answer, another number (``numbers``). The original answer's text is replaced by the new one in every retrieved
gold chunk (as a whole word, and an article before it made to fit: "an Architectural Liaison" becomes "a Project
Manager"); ``expected_answer`` is what a system that follows its context must now answer,
``original_answer`` what it would answer from its prior (counterfactual-following rate; Longpre et al. 2021,
"Entity-Based Knowledge Conflicts in Question Answering").
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Chunk, ComponentContext, ConfigError

from .base import Case, Operator, Outcome, register_operator
from .grammar_db import GrammarDatabase


class CounterfactualOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    database: str | None = Field(
        None, description="SQLite file or .sql dump of GRAMMAR samples (relative to the project folder)."
    )
    swaps: dict[str, str] = Field(default_factory=dict, description="Declared swaps: answer text -> replacement.")
    numbers: bool = Field(True, description="Swap a numeric answer for another number (samples without SQL).")
    tries: int = Field(20, ge=1, le=1000, description="GRAMMAR: candidate values tried per sample.")


@register_operator
class Counterfactual(Operator):
    """Rewrite the gold chunk with a changed value; record the counterfactual answer (from SQL for GRAMMAR)."""

    name = "counterfactual"
    Options = CounterfactualOptions

    def prepare(self, chunks: Sequence[Chunk], context: ComponentContext) -> None:
        self.db = None
        if self.options.database:
            path = context.resolve(self.options.database)
            if not path.exists():
                raise ConfigError(f"counterfactual: database '{self.options.database}' not found ({path})")
            self.db = GrammarDatabase.load(path)
        self._lock = threading.Lock()

    def apply(self, case: Case) -> Outcome:
        original = case.sample.reference_answers[0] if case.sample.reference_answers else None
        if original is None or not original.strip():
            return Outcome(False, list(case.chunks), details={"reason": "the sample has no reference answer"})
        swap = self._swap(case, original)
        if "reason" in swap:
            return Outcome(False, list(case.chunks), original_answer=original, details=swap)
        old, new = swap["old_text"], swap["new_text"]
        chunks, rewritten, pattern = [], [], whole(old)
        for chunk in case.chunks:
            if case.is_gold(chunk) and pattern.search(chunk.text):
                chunk = chunk.model_copy(update={"text": rewrite(chunk.text, old, new)})
                rewritten.append(chunk.id)
            chunks.append(chunk)
        details = {**swap, "rewritten": rewritten}
        if not rewritten:
            details["reason"] = f"'{old}' appears in no retrieved gold chunk"
        return Outcome(
            bool(rewritten), chunks, expected_answer=swap["answer"], original_answer=original, details=details
        )

    def _swap(self, case: Case, original: str) -> dict[str, Any]:
        attrs = case.sample.attributes
        if attrs.get("sql") and attrs.get("source_rows"):
            if getattr(self, "db", None) is None:
                return {"reason": "a GRAMMAR sample, but the operator has no 'database' option"}
            with self._lock:
                return self.db.counterfactual(
                    attrs["sql"], attrs["source_rows"], original, case.rng, self.options.tries
                )
        if original in self.options.swaps:
            new = self.options.swaps[original]
            return {"source": "declared", "old_text": original, "new_text": new, "answer": new}
        if self.options.numbers and _NUMBER.fullmatch(original.strip()):
            new = _other_number(original.strip(), case)
            return {"source": "number", "old_text": original.strip(), "new_text": new, "answer": new}
        return {"reason": "no declared swap for this answer and it is not a number"}


def whole(text: str) -> re.Pattern:
    """``text`` as a whole: not inside a longer word or number ("Engineer" does not match in "Engineering")."""
    return re.compile(r"(?<![\w.])" + re.escape(text) + r"(?![\w]|\.\d)")


_ARTICLE = re.compile(r"\b(a|an|A|An|AN)(\s+)$")


def rewrite(text: str, old: str, new: str) -> str:
    """``text`` with every whole ``old`` replaced by ``new``, and an indefinite article right before it made to fit
    ``new`` ("a" before a consonant sound, "an" before a vowel letter; its capital kept)."""
    out, last = [], 0
    for found in whole(old).finditer(text):
        before = text[last : found.start()]
        article = _ARTICLE.search(before)
        if article:
            before = before[: article.start()] + _article_for(new, article.group(1)) + article.group(2)
        out += [before, new]
        last = found.end()
    return "".join(out) + text[last:]


def _article_for(new: str, written: str) -> str:
    """The indefinite article before ``new``, in the case ``written`` was in ("A", "An", "AN", "a", "an")."""
    word = "an" if new[:1].lower() in "aeiou" else "a"
    if written == "AN":
        return word.upper()
    return word.capitalize() if written[0] == "A" else word


_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def _other_number(text: str, case: Case) -> str:
    """Another number written like ``text`` (same decimals): the original times a seeded factor, never equal."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    value = float(text)
    factor = case.rng.choice([0.5, 0.75, 1.25, 1.5, 2.0, 3.0])
    new = value * factor if value else case.rng.randint(1, 9)
    out = f"{new:.{decimals}f}"
    return out if out != text else f"{value + 1:.{decimals}f}"
