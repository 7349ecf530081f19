"""The LLM claim extractor and claim checker, through the judge base (:class:`ragassay.llm.LLMJudging`).

- :func:`extract_claims`: a text (conditioned on the question) becomes claims, subject-predicate-object triplets or
  short sentences (RAGChecker's extractor, RefChecker's ``LLMExtractor``). One call per text.
- :func:`check_claims`: claims against one reference text (the reference answer, the response or one retrieved
  chunk) get one label each, Entailment / Neutral / Contradiction (RefChecker's ``LLMChecker`` with joint
  checking). All claims of one call are checked together; RAGChecker checks 5 per call (``joint_check_num``).

Both reply with structured output, explanation first, validated (a triplet has three non-empty parts; a check
reply has exactly one label per claim, numbered in order, each one of the three labels). An invalid reply is
re-asked with the reason by :func:`ragassay.llm.ask_structured`; after the bounded re-asks the result is unusable,
with the raw reply and the error (never guessed). A provider failure after the backend's retries is unusable too.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, create_model, field_validator, model_validator

from ragassay import ProviderError
from ragassay.llm import fill, one_verdict

from .prompts import CHECKING_PROMPT, EXTRACTION_PROMPT, FORMAT_RULES, LABELS, numbered

Claim = Any  # a sentence (str) or a triplet (list of three str)


@dataclasses.dataclass
class Outcome:
    """What one judge call gave: ``value`` (claims, or labels with explanations), or None with the error and the
    raw reply."""

    value: Any
    explanation: str = ""
    raw: str = ""
    error: str | None = None

    @property
    def usable(self) -> bool:
        return self.error is None


def _part(value: Any) -> str:
    text = str(value).strip()
    if not text:
        raise ValueError("must not be empty")
    return text


class Triplet(BaseModel):
    """One claim as a knowledge triplet."""

    subject: str = Field(description="Who or what the claim is about.")
    predicate: str = Field(description="The relation or property.")
    object: str = Field(description="The value, object or complement.")

    @field_validator("subject", "predicate", "object", mode="before")
    @classmethod
    def _not_empty(cls, value: Any) -> str:
        return _part(value)


class _Extracted(BaseModel):
    explanation: str = Field(description="What the text states, written before the claims.")


@functools.lru_cache(maxsize=16)
def extraction_model(form: str, max_claims: int) -> type[BaseModel]:
    """The extractor's reply model: an explanation, then at most ``max_claims`` claims in ``form``."""
    item: Any = Triplet if form == "triplets" else str
    claims = (
        list[item],
        Field(max_length=max_claims, description=f"The claims, at most {max_claims} ({form}); empty if none."),
    )
    model = create_model("ExtractedClaims", __base__=_Extracted, claims=claims)
    if form == "sentences":

        @field_validator("claims")
        @classmethod
        def _sentences(cls, value: list[str]) -> list[str]:
            return [_part(sentence) for sentence in value]

        model = create_model("ExtractedClaims", __base__=model, __validators__={"sentences": _sentences})
    return model


class ClaimVerdict(BaseModel):
    """The check of one claim: its number, the explanation, then the label."""

    claim: int = Field(ge=1, description="The claim's number in the list.")
    explanation: str = Field(description="Why this label, written before it.")
    label: str = Field(description="Entailment, Neutral or Contradiction.")

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: Any) -> str:
        word = one_verdict(value, LABELS)
        return next(label for label in LABELS if label.lower() == word)


class _Verdicts(BaseModel):
    @model_validator(mode="after")
    def _numbered(self) -> _Verdicts:
        numbers = [v.claim for v in self.verdicts]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"the verdicts must be numbered 1 to {len(numbers)} in order, got {numbers}")
        return self


@functools.lru_cache(maxsize=256)
def checking_model(count: int) -> type[BaseModel]:
    """The checker's reply model for ``count`` claims: exactly ``count`` verdicts, numbered 1..count."""
    verdicts = (
        list[ClaimVerdict],
        Field(min_length=count, max_length=count, description=f"Exactly {count} verdicts, one per claim, in order."),
    )
    return create_model("ClaimVerdicts", __base__=_Verdicts, verdicts=verdicts)


def as_claim(item: Any) -> Claim:
    """A validated claim as stored: a triplet as ``[subject, predicate, object]``, a sentence as is."""
    return [item.subject, item.predicate, item.object] if isinstance(item, Triplet) else item


async def _asked(host: Any, prompt: str, model: type[BaseModel]) -> tuple[Any, str, str | None]:
    """(parsed or None, raw, error): one question to the host's judge model; a provider failure is an error."""
    try:
        reply = await host.ask([{"role": "user", "content": prompt}], model)
    except ProviderError as exc:
        return None, "", f"provider error: {exc}"
    if reply.parsed is None:
        return None, reply.raw, reply.error or "no usable reply"
    return reply.parsed, reply.raw, None


async def extract_claims(host: Any, text: str, question: str, *, form: str, max_claims: int) -> Outcome:
    """The claims of ``text`` (answering ``question``) by the host's judge model (an :class:`LLMJudging`)."""
    values = {"format_rule": FORMAT_RULES[form], "question": question, "text": text}
    parsed, raw, error = await _asked(host, fill(EXTRACTION_PROMPT, values), extraction_model(form, max_claims))
    if parsed is None:
        return Outcome(None, raw=raw, error=error)
    return Outcome([as_claim(item) for item in parsed.claims], parsed.explanation, raw)


async def check_claims(host: Any, claims: Sequence[Claim], reference: str, question: str) -> Outcome:
    """One label per claim of ``claims`` against ``reference``: ``value`` is ``[(label, explanation), ...]``."""
    if not claims:
        return Outcome([])
    values = {"count": str(len(claims)), "question": question, "reference": reference, "claims": numbered(claims)}
    parsed, raw, error = await _asked(host, fill(CHECKING_PROMPT, values), checking_model(len(claims)))
    if parsed is None:
        return Outcome(None, raw=raw, error=error)
    return Outcome([(v.label, v.explanation) for v in parsed.verdicts], raw=raw)
