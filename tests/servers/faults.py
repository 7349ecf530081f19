"""Injected faults for a scripted model server: which asking of which question fails, and the reply it gets.

A :class:`FaultSchedule` faults the first asking of every ``every``-th distinct question (the order the questions
first arrive in), the kinds of :data:`FAULTS` in turn: an HTTP 500, a cut-off body (both retried by the backend), a
reply that is not JSON and a reply that is JSON but invalid (both re-asked by the judge base). A re-ask (a request
with more than one message) and a question asked before are never faulted, so every fault costs one retry.
"""

from __future__ import annotations

import threading
from typing import Any

from .openai_chat import Turn, malformed, server_error

FAULTS = ("http_500", "malformed_body", "not_json", "invalid")


class FaultSchedule:
    """Decides the fault of each request (module docstring); ``faulted`` maps each faulted question to its kind."""

    def __init__(self, every: int = 0):
        self.every = every
        self.seen: dict[str, int] = {}
        self.faulted: dict[str, str] = {}
        self.lock = threading.Lock()

    def fault(self, asked: str, messages: int) -> str | None:
        """The fault for the question ``asked`` in a request of ``messages`` messages, or None."""
        if not self.every or messages != 1:
            return None
        with self.lock:
            if asked in self.seen:
                return None
            self.seen[asked] = index = len(self.seen)
            if index % self.every:
                return None
            self.faulted[asked] = kind = FAULTS[(index // self.every) % len(FAULTS)]
            return kind

    @staticmethod
    def reply(fault: str | None, not_json: str, invalid: str) -> Any:
        """The server's reply for ``fault`` (``not_json``: the text of a reply that is not JSON; ``invalid``: the
        JSON text of an invalid one), or None when there is no fault."""
        if fault == "http_500":
            return server_error(500)
        if fault == "malformed_body":
            return malformed()
        if fault == "not_json":
            return Turn(text=not_json)
        if fault == "invalid":
            return Turn(text=invalid)
        return None
