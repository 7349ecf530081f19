"""Fact-checking a text against facts: by an LLM (the groundedness blog's fact-checker, seeds/001), or offline
by word overlap.

Both answer the same question, "is every claim of ``text`` backed by ``facts``?", with an explanation first and
a verdict after (``correct`` true/false), or no verdict (None) with the reason and the raw reply.

- :class:`LLMFactChecker`: the blog's system prompt verbatim, the user message ``{"text": ..., "fact": ...}``
  as in the blog's example, structured output :class:`FactCheck` (explanation, correct) through
  :func:`ragassay.llm.ask_structured` (bounded re-asks, never a guess).
- :class:`LexicalFactChecker`: deterministic and free, and weak: the share of the text's content words (lower
  case, stop words dropped) that occur in the facts; correct when the share reaches ``threshold``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from ragassay import STOPWORDS, words
from ragassay.llm import ask_structured

#: The fact-checker system prompt of the groundedness blog (seeds/001, "The Details"), verbatim.
FACT_CHECK_PROMPT = (
    "You are a fact-checker that marks a text as correct or incorrect based on a provided fact. A text is correct "
    "only if all of the claims in it can be backed up by the fact. First, provide your explanation for your "
    "decision, then a correctness assessment that is either 'true' if the text is correct according to the facts "
    "or 'false' otherwise."
)
PROMPT_VERSION = "blog-2024-1"
#: Default threshold of the offline checker, chosen by the meta-evaluation on the shipped labelled set
#: (examples/aurp/labels.jsonl, examples/aurp/choose_threshold.py: the highest Youden's J; docs/judges.md).
DEFAULT_LEXICAL_THRESHOLD = 0.7


class FactCheck(BaseModel):
    """The fact-checker's structured reply: the explanation first, then the verdict."""

    explanation: str = Field(description="Why the text is or is not backed up by the fact, before the verdict.")
    correct: bool = Field(description="True if every claim of the text is backed up by the fact, else false.")


@dataclasses.dataclass
class CheckResult:
    """One fact-check: the verdict (None when the checker gave none), its explanation, the raw reply."""

    correct: bool | None
    explanation: str = ""
    raw: str = ""
    error: str | None = None


class LLMFactChecker:
    """The blog's fact-checker over any generator (an LLM backend, or a plain generator prompted for JSON)."""

    def __init__(self, generator: Any, *, prompt: str = FACT_CHECK_PROMPT, params: dict[str, Any] | None = None):
        self.generator = generator
        self.prompt = prompt
        self.params = params if params is not None else {"temperature": 0.0}

    async def check(self, text: str, facts: Sequence[str]) -> CheckResult:
        """Fact-check ``text`` against ``facts`` (joined by blank lines into the blog's single 'fact')."""
        content = json.dumps({"text": text, "fact": "\n\n".join(facts)}, ensure_ascii=False, indent=4)
        messages = [{"role": "system", "content": self.prompt}, {"role": "user", "content": content}]
        reply = await ask_structured(self.generator, messages, FactCheck, params=self.params)
        if reply.parsed is None:
            return CheckResult(None, raw=reply.raw, error=reply.error)
        return CheckResult(reply.parsed.correct, reply.parsed.explanation, reply.raw)


class LexicalFactChecker:
    """Offline: correct when at least ``threshold`` of the text's content words occur in the facts."""

    def __init__(self, threshold: float = DEFAULT_LEXICAL_THRESHOLD):
        self.threshold = threshold

    async def check(self, text: str, facts: Sequence[str]) -> CheckResult:
        return self.check_now(text, facts)

    def check_now(self, text: str, facts: Sequence[str]) -> CheckResult:
        content = sorted(set(words(text, drop_stopwords=True)) - STOPWORDS)
        if not content:
            return CheckResult(None, error="the text has no content words to check")
        known = set(words(" ".join(facts)))
        supported = [w for w in content if w in known]
        share = len(supported) / len(content)
        missing = [w for w in content if w not in known]
        explanation = (
            f"{len(supported)} of {len(content)} content words occur in the facts ({share:.2f}; "
            f"threshold {self.threshold:.2f})" + (f"; not found: {', '.join(missing[:8])}" if missing else "")
        )
        return CheckResult(share >= self.threshold, explanation)
