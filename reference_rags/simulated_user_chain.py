"""What the simulated user reads from a GRAMMAR chain sample, and how it phrases a turn (see :mod:`.simulated_user`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ragassay import DatasetError, Sample


@dataclasses.dataclass(frozen=True)
class ChainTurn:
    """One user turn of a chain: as written, stated standalone, and the text its pronoun stands for (or None)."""

    question: str
    standalone_question: str
    refers_to: str | None


def chain_turns(sample: Sample) -> list[ChainTurn]:
    """The user turns of ``sample``'s chain, turn 1 first and the sample's own turn last.

    Raises :class:`ragassay.DatasetError` naming the sample when it has no ``metadata["chain"]`` or the chain is
    malformed."""
    chain = (sample.metadata or {}).get("chain")
    where = f"sample {sample.question_id!r}"
    if not isinstance(chain, dict):
        raise DatasetError(
            f"{where} has no metadata['chain']: the simulated_user rag replays GRAMMAR follow-up chains "
            "(samples made by the grammar source's chains); run it on those samples only"
        )
    earlier = chain.get("earlier", [])
    if not isinstance(earlier, list):
        raise DatasetError(f"{where}: metadata['chain']['earlier'] must be a list of earlier turns")
    turns = [_turn(entry, f"{where}, metadata['chain']['earlier'][{i}]") for i, entry in enumerate(earlier)]
    own = {**chain, "question": sample.question}
    turns.append(_turn(own, f"{where}, metadata['chain']"))
    if sample.turn is not None and sample.turn != len(turns):
        raise DatasetError(
            f"{where} is turn {sample.turn} but its chain has {len(turns) - 1} earlier turn(s): the chain's "
            "'earlier' must list every user turn before this one"
        )
    return turns


def _turn(entry: Any, where: str) -> ChainTurn:
    if not isinstance(entry, dict):
        raise DatasetError(f"{where} must be an object with question, standalone_question and refers_to")
    question = entry.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DatasetError(f"{where} has no question (a non-empty string)")
    standalone = entry.get("standalone_question")
    refers_to = entry.get("refers_to")
    for key, value in (("standalone_question", standalone), ("refers_to", refers_to)):
        if value is not None and not isinstance(value, str):
            raise DatasetError(f"{where}: {key} must be a string or null, not {type(value).__name__}")
    if refers_to is not None and not (standalone or "").strip():
        raise DatasetError(f"{where} refers to {refers_to!r} but has no standalone_question to state it explicitly")
    return ChainTurn(question, standalone if standalone and standalone.strip() else question, refers_to or None)


def phrase(turn: ChainTurn, previous_answer: str | None, explicit_template: str) -> tuple[str, str]:
    """What the user asks at ``turn`` after the system answered ``previous_answer`` (None: the first turn), and how
    it was chosen: ``"dependent"`` (the answer names the referent: the question as written), ``"explicit"`` (it
    does not: ``explicit_template`` filled in) or ``"as written"`` (the turn refers to nothing)."""
    if turn.refers_to is None:
        return turn.question, "as written"
    if previous_answer is not None and turn.refers_to.casefold() in previous_answer.casefold():
        return turn.question, "dependent"
    filled = (
        explicit_template.replace("{refers_to}", turn.refers_to)
        .replace("{standalone_question}", turn.standalone_question)
        .replace("{question}", turn.question)
    )
    return filled, "explicit"
