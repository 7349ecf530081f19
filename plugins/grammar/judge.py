"""The ``grammar_llm`` judge: GRAMMAR's reference-based LLM judge (Table 6, "Ours") with the paper's protocol.

It is the ``correctness`` judge (:mod:`ragassay.plugins.judges.correctness`) under the name GRAMMAR configs
use, with ``reply = "text"`` by default: the Table 6 prompt as printed, the first whole word "Correct" or
"Incorrect" of the reply decides (so "Incorrect" is never read as "Correct"); a reply with neither is re-asked,
then unscored with the reply quoted. Set ``reply = "structured"`` for explanation-first structured output.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragassay.plugins.judges.correctness import CorrectnessJudge, CorrectnessOptions, parse_verdict

__all__ = ["GrammarJudgeOptions", "GrammarLLMJudge", "parse_verdict"]


class GrammarJudgeOptions(CorrectnessOptions):
    """Options of the grammar_llm judge (those of ``correctness``; the reply is free text by default)."""

    reply: Literal["structured", "text"] = Field(
        "text",
        description="'text' (default): a free-text reply whose first whole word Correct/Incorrect decides; "
        "'structured': explanation, then judgement, as structured output.",
    )


class GrammarLLMJudge(CorrectnessJudge):
    """Asks an LLM whether the answer matches the reference answer (GRAMMAR Table 6 "Ours" prompt, free text)."""

    name = "grammar_llm"
    Options = GrammarJudgeOptions
