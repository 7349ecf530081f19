"""MTRAG's published records read into samples: generation/RAG tasks and conversations (pure functions).

Source: IBM/mt-rag-benchmark (Apache-2.0), commit cc5b1d4: ``mtrag-human/generation_tasks/README.md`` (the task
format), ``mtrag-human/conversations/conversations.json`` (the conversation format) and
``scripts/conversations2retrieval.py`` (which passages of a conversation are its references). Used by the
dataset sources of :mod:`ragassay.plugins.conversations.mtrag`.

Every function returns a :class:`ragassay.Sample` or raises :class:`RowError` with what is wrong with the row;
the sources turn that into a warning naming the file and line (a row that cannot be read is never dropped
silently).
"""

from __future__ import annotations

import math
import re
from typing import Any

from ragassay import Sample, Turn, turn_id

#: MTRAG's answerability labels -> :attr:`ragassay.Sample.answerability`. CONVERSATIONAL (a turn such as "thanks!"
#: that asks for no information) fits none of the classes: it maps to None, the raw label stays in
#: ``mtrag_answerability``.
ANSWERABILITY = {
    "ANSWERABLE": "answerable",
    "UNANSWERABLE": "unanswerable",
    "PARTIAL": "partial",
    "UNDERSPECIFIED": "underspecified",
    "CONVERSATIONAL": None,
}
#: MTRAG's enrichment keys kept as sample attributes, by the attribute's name.
ENRICHMENTS = {
    "question_type": "Question Type",
    "multi_turn": "Multi-Turn",
    "standalone_type": "Standalone Type",
    "validity": "Validity",
    "ambiguity_type": "Ambiguity Type",
}
_SPEAKERS = {"user": "user", "agent": "agent", "assistant": "agent"}
_TASK_ID = re.compile(r"^(?P<cid>.+?)(?:<::>|::)(?P<turn>\d+)$")


class RowError(ValueError):
    """A row of an MTRAG file that cannot be read; the message says what is wrong."""


def answerability(labels: Any) -> tuple[str | None, str | None]:
    """(ragassay label, MTRAG's raw label) of an MTRAG answerability list (``["ANSWERABLE"]``); (None, None) when
    absent. An unknown label is a :class:`RowError`."""
    if _missing(labels) or labels == []:
        return None, None
    raw = labels[0] if isinstance(labels, list) else labels
    if not isinstance(raw, str) or raw.upper() not in ANSWERABILITY:
        known = ", ".join(ANSWERABILITY)
        raise RowError(f"answerability {labels!r} is not one of MTRAG's labels ({known})")
    return ANSWERABILITY[raw.upper()], raw.upper()


def task_sample(record: dict[str, Any], contexts: str = "reference") -> Sample:
    """The sample of one generation/RAG task (``reference.jsonl``, ``RAG.jsonl``, the sample_data files).

    ``input``: the turns up to this one (the last, a user turn, is the question; the others the history);
    ``targets``: the reference answers; ``contexts``: the reference passages (``contexts="reference"``) or not
    references (``"none"``: RAG.jsonl's are one retriever's top 5; their ids stay in ``mtrag_context_ids``);
    ``answerability`` and the other enrichments from the record, else from the last user turn's ``enrichments``.
    """
    cid, turn = _task_key(record)
    turns = _turns(record.get("input"), "input")
    if not turns or turns[-1].speaker != "user":
        raise RowError("'input' must end with the user's turn (the question)")
    enrichments = {**_lower_keys(_enrichments(record.get("input")[-1])), **_lower_keys(record)}
    label, raw = answerability(enrichments.get("answerability"))
    passages = _contexts(record.get("contexts", []))
    attributes = _attributes(enrichments, record, raw)
    if contexts == "reference":
        references = {
            "reference_contexts": [p.get("text", "") for p in passages],
            "reference_context_ids": [str(p["document_id"]) for p in passages],
        }
    else:
        references = {}
        attributes["mtrag_context_ids"] = [str(p["document_id"]) for p in passages]
    return Sample(
        question_id=turn_id(cid, turn),
        question=turns[-1].text,
        conversation_id=cid,
        turn=turn,
        history=turns[:-1],
        reference_answers=[t.text for t in _turns(record.get("targets", []), "targets")],
        answerability=label,
        is_answerable=label != "unanswerable",
        **references,
        **attributes,
    )


def conversation_samples(record: dict[str, Any], index: int) -> list[Sample]:
    """One sample per user turn of a conversation of ``conversations.json``.

    The conversation id: ``conversation_id`` when the record has one, else ``<author>_<timestamp of its first
    message>`` (the published file has none; ``scripts/conversations2retrieval.py`` names turns the same way).
    A turn's reference answer is the agent message that follows it; its reference passages are that message's
    contexts judged relevant ("yes") by the conversation's editor, else by its author (as
    ``conversations2retrieval.py`` builds the qrels).
    """
    messages = record.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RowError(f"conversation {index + 1} has no 'messages' list")
    cid = _conversation_id(record, messages)
    history: list[Turn] = []
    samples = []
    for position, message in enumerate(messages):
        turn = _turn(message, f"messages[{position}]")
        if turn.speaker == "user":
            reply = messages[position + 1] if position + 1 < len(messages) else None
            samples.append(_conversation_turn(record, cid, len(samples) + 1, turn, message, reply, history))
        history = [*history, turn]
    return samples


def _conversation_turn(
    record: dict[str, Any], cid: str, number: int, turn: Turn, message: dict, reply: dict | None, history: list[Turn]
) -> Sample:
    """The sample of the user turn ``number`` of a conversation."""
    enrichments = _lower_keys(_enrichments(message))
    label, raw = answerability(enrichments.get("answerability"))
    answers, passages = [], []
    if isinstance(reply, dict) and _SPEAKERS.get(reply.get("speaker")) == "agent":
        answers = [str(reply.get("text", ""))]
        passages = [p for p in _contexts(reply.get("contexts", [])) if _judged_relevant(p, record)]
    collection = (record.get("retriever") or {}).get("collection", {}).get("name") or record.get("domain")
    return Sample(
        question_id=turn_id(cid, number),
        question=turn.text,
        conversation_id=cid,
        turn=number,
        history=list(history),
        reference_answers=answers,
        reference_contexts=[p.get("text", "") for p in passages],
        reference_context_ids=[str(p["document_id"]) for p in passages],
        answerability=label,
        is_answerable=label != "unanswerable",
        **_attributes(enrichments, {"collection": collection} if collection else {}, raw),
    )


def _task_key(record: dict[str, Any]) -> tuple[str, int]:
    """(conversation id, turn) of a task: its ``conversation_id`` and ``turn``, else parsed from ``task_id``."""
    task_id = record.get("task_id")
    parsed = _TASK_ID.match(task_id) if isinstance(task_id, str) else None
    cid = record.get("conversation_id", parsed.group("cid") if parsed else None)
    turn = record.get("turn", parsed.group("turn") if parsed else None)
    if not isinstance(cid, str) or not cid:
        raise RowError("no 'conversation_id' (nor a task_id '<conversation>::<turn>')")
    try:
        number = int(turn)
    except (TypeError, ValueError):
        raise RowError(f"'turn' must be a whole number, got {turn!r}") from None
    if number < 1:
        raise RowError(f"'turn' must be 1 or more, got {number}")
    return cid, number


def _turns(value: Any, field: str) -> list[Turn]:
    if not isinstance(value, list):
        raise RowError(f"'{field}' must be a list of turns, got {type(value).__name__}")
    return [_turn(item, f"{field}[{i}]") for i, item in enumerate(value)]


def _turn(item: Any, where: str) -> Turn:
    if not isinstance(item, dict):
        raise RowError(f"{where} must be an object with 'speaker' and 'text'")
    speaker = _SPEAKERS.get(str(item.get("speaker", "")).lower())
    text = item.get("text")
    if speaker is None or not isinstance(text, str):
        raise RowError(
            f"{where} needs 'speaker' (user or agent) and a string 'text', got speaker {item.get('speaker')!r}"
        )
    return Turn(speaker=speaker, text=text)


def _contexts(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(p, dict) and "document_id" in p for p in value):
        raise RowError("'contexts' must be a list of passages, each with a 'document_id'")
    return value


def _enrichments(message: Any) -> dict[str, Any]:
    found = message.get("enrichments") if isinstance(message, dict) else None
    return found if isinstance(found, dict) else {}


def _lower_keys(mapping: dict[str, Any]) -> dict[str, Any]:
    """The enrichment keys MTRAG spells both ways ('answerability', 'Answerability') under one spelling."""
    return {("answerability" if key.lower() == "answerability" else key): value for key, value in mapping.items()}


def _attributes(enrichments: dict[str, Any], record: dict[str, Any], raw: str | None) -> dict[str, Any]:
    """The free attributes of a sample: the enrichments present (lists), the collection, the raw label."""
    found: dict[str, Any] = {}
    for name, key in ENRICHMENTS.items():
        value = enrichments.get(key)
        if not _missing(value):
            found[name] = value
    collection = record.get("Collection", record.get("collection"))
    if isinstance(collection, str):
        found["collection"] = collection
    if isinstance(record.get("task_id"), str):
        found["mtrag_task_id"] = record["task_id"]
    if raw is not None:
        found["mtrag_answerability"] = raw
    return found


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _conversation_id(record: dict[str, Any], messages: list[Any]) -> str:
    given = record.get("conversation_id")
    if isinstance(given, str) and given:
        return given
    author, first = record.get("author"), messages[0] if isinstance(messages[0], dict) else {}
    if not isinstance(author, str) or "timestamp" not in first:
        raise RowError("the conversation has no 'conversation_id', nor an 'author' and a first message 'timestamp'")
    return f"{author}_{first['timestamp']}"


def _judged_relevant(passage: dict[str, Any], record: dict[str, Any]) -> bool:
    """conversations2retrieval.py's rule: the editor's relevance judgement when there is one, else the author's."""
    votes = ((passage.get("feedback") or {}).get("relevant")) or {}
    editor, author = record.get("editor"), record.get("author")
    judge = editor if editor in votes else author
    vote = votes.get(judge)
    return isinstance(vote, dict) and vote.get("value") == "yes"
