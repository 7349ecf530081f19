"""Stored traces as conversation turns: what the ``traces`` source yields with ``conversations = true``.

The traces of one session id (``session.id`` / ``gen_ai.conversation.id``) are one conversation, in start-time
order, each trace a turn: ``conversation_id`` is the session id, ``turn`` the trace's position, ``question_id``
``session::turn``, the question the trace's, and ``history`` the earlier traces' questions (user) and answers
(agent). A trace without a session id stays a single question (id: its trace id) and the source warns with the
count. ``sample`` picks whole sessions; ``where`` picks the turns to evaluate, the others still being history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ragassay import Sample, Turn, Unmapped, scan_sessions, turn_id


def conversation_samples(
    url: str, options, note: Callable[[Unmapped], None], warn: Callable[[str], None]
) -> Iterator[Sample]:
    """The samples of the traces in ``url`` grouped by session (``options``: the traces source's options)."""
    alone = 0
    for item in scan_sessions(url, where=options.where, sample=options.sample, mapping=options.mapping):
        if isinstance(item, Unmapped):
            note(item)
        elif item.session_id:
            yield from _turns(item)
        else:
            alone += 1
            yield _sample(item.turns[0].trace["trace_id"], item.turns[0])
    if alone:
        keys = " / ".join(options.mapping.session_keys)
        warn(
            f"conversations = true: {alone} trace(s) have no session id ({keys}); each was kept as a single question "
            "(its id: the trace id). Set the attribute in your app, or mapping.session_keys to the one it uses"
        )


def _turns(session) -> Iterator[Sample]:
    """Each selected turn of a session, with the turns before it (selected or not) as its history."""
    history: list[Turn] = []
    for position, turn in enumerate(session.turns, start=1):
        if turn.selected:
            yield _sample(turn_id(session.session_id, position), turn, session.session_id, position, list(history))
        history += [Turn(speaker="user", text=turn.question), Turn(speaker="agent", text=turn.answer)]


def _sample(question_id: str, turn, conversation_id: str | None = None, position=None, history=()) -> Sample:
    return Sample(
        question_id=question_id,
        question=turn.question,
        conversation_id=conversation_id,
        turn=position,
        history=list(history),
        metadata={"trace": turn.trace, "traces": {turn.service_version: turn.trace}},
        service_version=turn.service_version,
        model=turn.model,
    )
