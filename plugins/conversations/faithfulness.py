"""Per-turn faithfulness with support attribution: ``turn_context_support``, ``turn_history_support`` and
``turn_unsupported``, three rates from one judge call per output.

The judge splits the turn's answer into claims (RAGChecker's claim-level checking, Ru et al., 2024, arXiv:2408.08067,
section 3) and says where each claim's support is: ``context`` (one of this turn's retrieved contexts),
``history`` (an earlier turn of the conversation, ``Sample.history``: what the user said or the system answered
before) or ``none``. A single faithfulness score (DeepEval's turn faithfulness, RAGAS' faithfulness) counts a claim
that rests on an earlier turn as a hallucination; here it is told apart (issue 39). The three rates are the shares
of the claims in each class and add up to 1.

The first of the three metrics scored for an output makes the call (counted on it); the others of the same
options await its result (:class:`ragassay.plugins.claims.sharing.SharedRuns`) and name it in
``details["claims_with"]``. Every one stores the claims in ``details["claims"]``::

    [{"text": str, "support": "context" | "history" | "none", "turn": int | None,
      "context": int | None (0-based index of the retrieved context), "explanation": str}]

The reply is validated (a context number names a retrieved context, a turn number an earlier turn, ``none`` names
neither) and re-asked with the reason; a reply still invalid after the bounded re-asks, or a failed judge model,
makes all three unscored with the raw reply. An answer without claims is unscored (no rate is defined).
"""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from ragassay import RAGOutput, Sample, Unscored, hookimpl
from ragassay.llm import LLMJudging, answer_text, asks, context_texts, fill, one_verdict

from .faithfulness_base import SUPPORTS, TurnSupportMetric, claim_row, rate_classes
from .faithfulness_offline import OFFLINE_METRICS
from .turn_judging import TurnJudgeOptions
from .turn_prompts import SUPPORT_PROMPT, SUPPORT_VERSION, render_contexts, render_history, turn_numbers


class SupportedClaim(BaseModel):
    """One claim of the answer with where its support is; the explanation comes before the verdict."""

    text: str = Field(description="The claim, a short sentence readable alone.")
    explanation: str = Field(description="Where the claim is stated, written before the support.")
    support: str = Field(description='"context", "history" or "none".')
    turn: int | None = Field(None, description='The earlier turn that supports it (support "history" only).')
    context: int | None = Field(None, description='The number of the context that supports it ("context" only).')

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a claim must not be empty")
        return value.strip()

    @field_validator("support", mode="before")
    @classmethod
    def _support(cls, value: Any) -> str:
        return one_verdict(value, SUPPORTS)


class _Supports(BaseModel):
    explanation: str = Field(description="What the answer states, written before the claims.")


@functools.lru_cache(maxsize=256)
def support_model(contexts: int, turns: tuple[int, ...], max_claims: int) -> type[BaseModel]:
    """The reply model for an output with ``contexts`` retrieved contexts and earlier turns ``turns``: every
    claim's context number is 1..contexts, its turn one of ``turns``, and only the one its support names."""

    def _check(self: Any) -> Any:
        for number, claim in enumerate(self.claims, start=1):
            _check_claim(number, claim, contexts, turns)
        return self

    claims = (list[SupportedClaim], Field(max_length=max_claims, description=f"At most {max_claims} claims."))
    validators = {"attributed": model_validator(mode="after")(_check)}
    return create_model("TurnSupport", __base__=_Supports, __validators__=validators, claims=claims)


def _check_claim(number: int, claim: SupportedClaim, contexts: int, turns: tuple[int, ...]) -> None:
    where = f"claim {number}"
    if claim.support == "context":
        if claim.context is None or not 1 <= claim.context <= contexts:
            have = f"1 to {contexts}" if contexts else "none: no context was retrieved"
            raise ValueError(f'{where}: support "context" needs the number of a context ({have})')
        if claim.turn is not None:
            raise ValueError(f'{where}: support "context" gives no turn')
    elif claim.support == "history":
        if claim.turn is None or claim.turn not in turns:
            have = ", ".join(map(str, turns)) if turns else "none: this is the first turn"
            raise ValueError(f'{where}: support "history" needs the number of an earlier turn ({have})')
        if claim.context is not None:
            raise ValueError(f'{where}: support "history" gives no context')
    elif claim.turn is not None or claim.context is not None:
        raise ValueError(f'{where}: support "none" gives neither a turn nor a context')


class _LLMTurnSupport(LLMJudging, TurnSupportMetric):
    family = "llm"
    requires = frozenset({"conversation_id", "question", "answer", "contexts"})

    class Options(TurnJudgeOptions):
        """Options of the judge-based turn support rates (``turn_context_support``, ...)."""

        prompt_version: Literal["ragassay-turn-support-1"] = Field(
            SUPPORT_VERSION, description="Version of the support prompt and its reply model (part of the identity)."
        )
        max_claims: int = Field(32, ge=1, le=200, description="Most claims one reply may give (more is re-asked).")

    def prompt_text(self) -> str:
        return f"{self.options.max_claims} {self.options.max_text_chars}\n{SUPPORT_PROMPT}"

    def judge_name(self) -> str:
        return self.identity

    def _prompt(self, sample: Sample, answer: str, contexts: list[str]) -> str:
        limit = self.options.max_text_chars
        values = {
            "max_claims": str(self.options.max_claims),
            "history": render_history(sample.history, limit),
            "question": sample.question,
            "contexts": render_contexts(contexts, limit),
            "answer": answer[:limit],
        }
        return fill(SUPPORT_PROMPT, values)

    async def supports(self, sample: Sample, output: RAGOutput) -> tuple[list[dict[str, Any]], str] | Unscored:
        turns = tuple(sorted(set(turn_numbers(sample.history))))
        model = support_model(len(output.contexts), turns, self.options.max_claims)
        prompt = self._prompt(sample, output.answer, list(output.contexts))
        parsed, failed = await self.ask_once(prompt, model, "support judge reply")
        if failed is not None:
            return failed
        rows = [
            claim_row(c.text, c.support, c.turn, None if c.context is None else c.context - 1, c.explanation)
            for c in parsed.claims
        ]
        return rows, parsed.explanation

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One support call per output, made by the first turn support metric of these options (others: 0)."""
        model = self.judge_model()
        owners = self._shared().consumers.get(self.shared_key(), {})
        if owners and next(iter(owners)) != self.name:
            return asks(model, [])
        contexts = context_texts(sample, hints) or []
        turns = tuple(sorted(set(turn_numbers(sample.history))))
        reply = support_model(len(contexts), turns, self.options.max_claims)
        return asks(model, [self._prompt(sample, answer_text(hints), contexts)], reply)


METRICS = rate_classes(_LLMTurnSupport, "", "; one judge call per output, shared by the three rates")


@hookimpl
def register_metrics(register):
    """Register ``turn_context_support``, ``turn_history_support`` and ``turn_unsupported`` (judge-based) and
    their offline variants (``*_offline``)."""
    for cls in [*METRICS, *OFFLINE_METRICS]:
        register(cls)
