"""``knowledge_retention``: the facts the user gave in earlier turns are neither asked again nor contradicted.

The facts are what the user said about themselves, their situation or their request in the earlier user turns of
``Sample.history`` (not their questions, nothing the system said). Each fact gets one status in the reply to this
turn: ``asked_again`` (the reply asks for it again), ``contradicted`` (the reply states or assumes something
incompatible with it) or ``kept`` (neither). The value is

    knowledge_retention = 1 - (asked_again + contradicted) / facts

A turn whose history holds no user fact is unscored (nothing to retain), as is a first turn. Details:
``details["facts"] = [{"fact", "turn", "status", "explanation"}]`` and the counts per status.

The peer definition is DeepEval's ``KnowledgeRetentionMetric`` (docs: deepeval.com, "Knowledge Retention"): an LLM
extracts the knowledge of every user turn, then decides for every assistant turn whether it shows "attrition"
(forgets or contradicts it); the score is the share of assistant turns without attrition, one score per
conversation. Here: one score per turn (the turn's own reply only, so that the first turn that forgets is found
and the per-turn statistics and breakdowns apply), per fact rather than per reply (one forgotten fact of four
costs a quarter, not the whole turn), and "asked again" and "contradicted" are told apart.

``knowledge_retention`` asks the judge model (explanation before each status, validated and re-asked, unscored
with the raw reply when still unusable); ``knowledge_retention_offline`` (:mod:`.retention_offline`) is lexical.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from ragassay import MetricResult, RAGOutput, Sample, Unscored, hookimpl
from ragassay.llm import LLMJudging, answer_text, asks, fill, one_verdict

from .retention_base import STATUSES, RetentionMetric, no_earlier_user_turn, retention_result, user_turns
from .retention_offline import KnowledgeRetentionOffline
from .turn_judging import TurnJudgeOptions
from .turn_prompts import RETENTION_PROMPT, RETENTION_VERSION, render_history


class RetainedFact(BaseModel):
    """One fact the user gave earlier, with its status in the reply; the explanation comes before the status."""

    fact: str = Field(description="The fact, a short sentence readable alone.")
    turn: int = Field(description="The earlier turn where the user gave it.")
    explanation: str = Field(description="How the reply treats the fact, written before the status.")
    status: str = Field(description='"kept", "asked_again" or "contradicted".')

    @field_validator("fact")
    @classmethod
    def _fact(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a fact must not be empty")
        return value.strip()

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: Any) -> str:
        return one_verdict(value, STATUSES)


class _Facts(BaseModel):
    explanation: str = Field(description="What the user told the assistant earlier, written before the facts.")


@functools.lru_cache(maxsize=256)
def facts_model(user_turns: tuple[int, ...], max_facts: int) -> type[BaseModel]:
    """The reply model: at most ``max_facts`` facts, each from one of the earlier user turns ``user_turns``."""

    def _check(self: Any) -> Any:
        for number, fact in enumerate(self.facts, start=1):
            if fact.turn not in user_turns:
                have = ", ".join(map(str, user_turns))
                raise ValueError(f"fact {number}: turn {fact.turn} is not an earlier user turn ({have})")
        return self

    facts = (list[RetainedFact], Field(max_length=max_facts, description=f"At most {max_facts} facts; may be empty."))
    validators = {"from_user_turns": model_validator(mode="after")(_check)}
    return create_model("RetainedFacts", __base__=_Facts, __validators__=validators, facts=facts)


class KnowledgeRetention(LLMJudging, RetentionMetric):
    """1 - share of the facts the user gave in earlier turns that the reply asks again or contradicts (judge-based;
    DeepEval's knowledge retention made per turn and per fact)."""

    name = "knowledge_retention"
    requires = frozenset({"conversation_id", "history", "question", "answer"})

    class Options(TurnJudgeOptions):
        """Options of ``knowledge_retention``."""

        prompt_version: Literal["ragassay-retention-1"] = Field(
            RETENTION_VERSION, description="Version of the retention prompt (part of the identity)."
        )
        max_facts: int = Field(32, ge=1, le=200, description="Most facts one reply may list (more is re-asked).")

    def prompt_text(self) -> str:
        return f"{self.options.max_facts} {self.options.max_text_chars}\n{RETENTION_PROMPT}"

    def _prompt(self, sample: Sample, answer: str) -> str:
        limit = self.options.max_text_chars
        values = {"max_facts": str(self.options.max_facts), "history": render_history(sample.history, limit)}
        return fill(RETENTION_PROMPT, {**values, "question": sample.question, "answer": answer[:limit]})

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if (skipped := no_earlier_user_turn(sample)) is not None:
            return skipped
        model = facts_model(user_turns(sample), self.options.max_facts)
        parsed, failed = await self.ask_once(self._prompt(sample, output.answer), model, "retention judge reply")
        if failed is not None:
            return failed
        facts = [
            {"fact": f.fact, "turn": f.turn, "status": f.status, "explanation": f.explanation} for f in parsed.facts
        ]
        return retention_result(facts, parsed.explanation, judge=self.identity)

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One call per turn with an earlier user turn (none otherwise)."""
        if no_earlier_user_turn(sample) is not None:
            return asks(self.judge_model(), [])
        model = facts_model(user_turns(sample), self.options.max_facts)
        return asks(self.judge_model(), [self._prompt(sample, answer_text(hints))], model)


@hookimpl
def register_metrics(register):
    """Register ``knowledge_retention`` and ``knowledge_retention_offline``."""
    register(KnowledgeRetention)
    register(KnowledgeRetentionOffline)
