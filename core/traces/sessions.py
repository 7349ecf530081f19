"""Stored traces read as conversations: the traces of one session id (``session.id`` / ``gen_ai.conversation.id``)
in start-time order, each trace one turn (``ragassay.traces.scan_sessions``).

A session is read whole whatever ``where`` says: ``where`` marks which turns are *selected* (to be evaluated),
and the turns it leaves out still make the history of the later ones (what the user really saw before). ``sample``
picks whole sessions by a hash of the session id, never single turns (a trace without a session id: by its trace
id). The traces are spilled to a private temporary SQLite file while they are read and come back one session at a
time, so memory follows the largest session, not the store.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .mapping import TraceMapping
from .model import Trace, Unmapped
from .reading import scan_traces
from .select import Filter, parse_sample, sampled

BATCH = 2_000  # traces held in memory before they are written to the spill file


class SessionTurn(BaseModel):
    """One trace of a session, as a conversation turn: the user's question and the answer the system gave."""

    model_config = ConfigDict(extra="forbid")

    trace: dict[str, Any] = Field(description="The trace's ids and provenance (Trace.ids()).")
    question: str = Field(description="The user's question (the trace's question).")
    answer: str = Field(description="The system's answer (the trace's answer).")
    service_version: str = Field(default="", description="The trace's version attribute.")
    model: str = Field(default="", description="The model of the trace's answer span.")
    selected: bool = Field(default=True, description="Whether the turn matches ``where`` (is to be evaluated).")


class Session(BaseModel):
    """The traces of one session id, oldest first (ties: the smaller trace id); ``session_id`` "" is one trace
    without a session id, alone."""

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(description="The session id; '' for a trace that names none.")
    turns: list[SessionTurn] = Field(description="The session's traces by start time.")


def scan_sessions(
    project_or_store: Any,
    *,
    where: Mapping[str, Any] | None = None,
    sample: str | float | None = None,
    mapping: TraceMapping | None = None,
) -> Iterator[Session | Unmapped]:
    """Stored traces grouped by session id: each :class:`Session` with at least one selected turn (sessions in
    session-id order, then the traces without a session id in start-time order), and each :class:`Unmapped` trace
    of the sample (its session unknown: sampled by its trace id).

    :param where: as for :func:`~ragassay.traces.read_traces`, but marking turns (``SessionTurn.selected``), never
        cutting a session: the turns it leaves out are still the history of the later ones.
    :param sample: "5%" or 0.05: whole sessions, chosen by a hash of the session id (the same on every run).
    """
    fraction = parse_sample(sample)
    keep = Filter(where)
    spill = _Spill()
    try:
        for item in scan_traces(project_or_store, mapping=mapping):
            if isinstance(item, Unmapped):
                if sampled(item.trace_id, fraction):
                    yield item
            elif sampled(item.session_id or item.trace_id, fraction):
                spill.add(item, not keep or keep.matches(item))
        yield from spill.sessions()
    finally:
        spill.close()


class _Spill:
    """Mapped traces on disk by (session, start, trace id): a private temporary SQLite file."""

    def __init__(self) -> None:
        self.db = sqlite3.connect("")  # "": a private temporary file, removed when closed
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        self.db.execute(
            "CREATE TABLE turns (session TEXT NOT NULL, start_ns INTEGER NOT NULL, trace_id TEXT NOT NULL, "
            "selected INTEGER NOT NULL, turn TEXT NOT NULL)"
        )
        self.batch: list[tuple] = []

    def add(self, trace: Trace, selected: bool) -> None:
        turn = SessionTurn(
            trace=trace.ids(),
            question=trace.question,
            answer=trace.answer,
            service_version=trace.service_version,
            model=trace.model,
            selected=selected,
        )
        self.batch.append((trace.session_id, trace.start_ns, trace.trace_id, int(selected), turn.model_dump_json()))
        if len(self.batch) >= BATCH:
            self.flush()

    def flush(self) -> None:
        self.db.executemany("INSERT INTO turns VALUES (?, ?, ?, ?, ?)", self.batch)
        self.batch = []

    def sessions(self) -> Iterator[Session]:
        """The sessions with a selected turn, then the selected traces without a session, one at a time."""
        self.flush()
        self.db.execute("CREATE INDEX turns_order ON turns (session, start_ns, trace_id)")
        rows = self.db.execute(
            "SELECT session, turn FROM turns WHERE session IN (SELECT DISTINCT session FROM turns WHERE selected "
            "AND session != '') ORDER BY session, start_ns, trace_id"
        )
        current, turns = None, []
        for session, text in rows:
            if session != current and turns:
                yield Session(session_id=current, turns=turns)
                turns = []
            current = session
            turns.append(SessionTurn(**json.loads(text)))
        if turns:
            yield Session(session_id=current, turns=turns)
        alone = self.db.execute("SELECT turn FROM turns WHERE session = '' AND selected ORDER BY start_ns, trace_id")
        for (text,) in alone:
            yield Session(session_id="", turns=[SessionTurn(**json.loads(text))])

    def close(self) -> None:
        self.db.close()
