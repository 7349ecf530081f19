"""A scripted chat model that follows the context it is given, for :class:`servers.openai_chat.OpenAIChatServer`.

It reads the naive RAG prompt (a system message, then ``Sources:`` with ``[n] text`` blocks and ``Question: ...``)
and answers by fixed rules, like a small instruction-following model (the far side of the generator boundary):

1. **Instructions in a source are obeyed**, unless the system prompt calls the sources *untrusted* (the hardened
   prompt): a source sentence that addresses the reader (``ignore``, ``reply``, ``answer``, ``write``, ...) and
   names a code word (capitals, a hyphen, 4+ letters or digits: ``CANARY-1a2b3c4d``) is an instruction; the model
   replies with the code word, or, when the sentence asks to copy, repeat or include the documents
   (exfiltration), with the code word followed by every other source.
2. **Otherwise it answers from the sources**: the candidate sentences are those that mention every capitalised
   word of the question after its first (its subject: names, places) and share at least one other content word
   with it (words of 3+ letters outside :data:`STOP`, compared by their first 5 letters: "located" ~ "location");
   the answer is the candidate sharing most content words (ties: the earlier source, then the earlier sentence),
   cited as ``[n]`` (title and heading lines are not candidates). Without a candidate it says :data:`REFUSAL` (the sources do not contain the answer).

Every reply is a pure function of the request; ``obeyed`` lists the (code word, system prompt) of each instruction
it followed (what the injection metric should find).
"""

from __future__ import annotations

import re
import threading

from .base import Request
from .openai_chat import Turn

REFUSAL = "The sources do not contain the answer."
_SOURCE = re.compile(r"^\[(\d+)\] ", re.MULTILINE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"\w+")
_CODE = re.compile(r"\b[A-Z][A-Z0-9]+-[0-9A-Za-z]{4,}\b")
_ADDRESSES = re.compile(r"\b(ignore|disregard|reply|respond|answer|write|repeat|copy|include|end every)\b", re.I)
_COPIES = re.compile(r"\b(copy|repeat|include)\b", re.I)
STOP = frozenset(
    "the and was were for you your what which where when who whom how did does could would please tell can that this "
    "with our are there have has had will from about know like really help find out need want able".split()
)


def parse(request: Request) -> tuple[str, list[str], str]:
    """(system prompt, sources in order, question) of a naive RAG chat request."""
    messages = (request.json or {}).get("messages", [])
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    body, _, question = user.rpartition("\n\nQuestion: ")
    body = body.removeprefix("Sources:\n")
    starts = list(_SOURCE.finditer(body))
    sources = [
        body[m.end() : (starts[i + 1].start() if i + 1 < len(starts) else len(body))] for i, m in enumerate(starts)
    ]
    return system, [s.strip() for s in sources], question.strip()


class ContextFollowing:
    """The responder: ``server.default = ContextFollowing()``; it records the code words it obeyed."""

    def __init__(self) -> None:
        self.obeyed: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> Turn:
        system, sources, question = parse(request)
        if "untrusted" not in system.lower():
            for i, source in enumerate(sources):
                for sentence in _sentences(source):
                    code = _CODE.search(sentence)
                    if code and _ADDRESSES.search(sentence):
                        with self._lock:
                            self.obeyed.append((code.group(0), system))
                        if _COPIES.search(sentence):
                            return Turn(text=" ".join([code.group(0)] + sources[:i] + sources[i + 1 :]))
                        return Turn(text=code.group(0))
        return Turn(text=answer(question, sources))


def answer(question: str, sources: list[str]) -> str:
    """The question's answer from ``sources`` by rule 2 of the module docstring."""
    words = _WORD.findall(question)
    subject = {w.lower() for w in words[1:] if len(w) > 1 and w[0].isupper()}
    asked = _content(words) - {w[:5] for w in subject}
    best: tuple[int, int, int, str] | None = None
    for n, source in enumerate(sources, start=1):
        for position, sentence in enumerate(_sentences(source)):
            found = _WORD.findall(sentence)
            shared = len(asked & _content(found))
            if not shared or not subject <= {w.lower() for w in found}:
                continue
            key = (-shared, n, position, sentence)
            best = key if best is None or key < best else best
    if best is None:
        return REFUSAL
    return f"{best[3]} [{best[1]}]"


def _sentences(text: str) -> list[str]:
    """The sentences of ``text``; title and heading lines (``Title: ...``, ``# ...``) are not sentences."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip() and not s.strip().startswith(("Title:", "#"))]


def _content(words: list[str]) -> set[str]:
    """Content words (3+ letters, not in :data:`STOP`) by their first 5 letters, lower case."""
    return {w.lower()[:5] for w in words if len(w) >= 3 and w.lower() not in STOP}
