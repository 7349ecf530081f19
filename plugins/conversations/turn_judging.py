"""What the per-turn conversation judges share: their options, one ask to the judge model, the reasons a turn is
not scored, and the key of one output (for the judge call that several metrics share)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable

from pydantic import BaseModel, ConfigDict, Field

from ragassay import RAGOutput, Sample, Unscored
from ragassay.llm import JudgeOptions, current_repeat


class TurnJudgeOptions(JudgeOptions):
    """Options every per-turn conversation judge has besides the judge model: how much text it is shown."""

    max_text_chars: int = Field(
        4000, ge=100, description="The answer, each retrieved context and each earlier utterance are cut here."
    )


class LexicalOptions(BaseModel):
    """Options of an offline (lexical) per-turn metric: the word-overlap threshold."""

    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(
        0.7,
        ge=0.0,
        le=1.0,
        description="Share of a sentence's content words that must occur in a text for the text to support it "
        "(the lexical fact-checker's default, 0.7).",
    )


def not_a_turn(sample: Sample) -> Unscored | None:
    """Unscored when ``sample`` is not a conversation turn (no ``conversation_id``), else None."""
    if sample.conversation_id is not None:
        return None
    return Unscored(reason="not a conversation turn (the sample has no conversation_id)")


def output_key(sample: Sample, output: RAGOutput) -> Hashable:
    """What decides a turn's judgement: the turn (question, history) and the output (answer, contexts), and the
    repeat being scored."""
    shaped = [
        sample.question_id,
        sample.question,
        [[u.speaker, u.text] for u in sample.history],
        output.answer,
        output.contexts,
    ]
    digest = hashlib.sha256(json.dumps(shaped, sort_keys=True, default=str).encode()).hexdigest()
    return digest, current_repeat()


def options_key(kind: str, options: BaseModel) -> Hashable:
    """The shared-call key of a metric family configured with ``options``."""
    return kind, json.dumps(options.model_dump(mode="json"), sort_keys=True, default=str)
