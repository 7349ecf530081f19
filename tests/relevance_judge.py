"""A scripted relevance judge for the BEIR sample: an OpenAI-compatible loopback server that answers UMBRELA's
prompt from the sample's real qrels, with seeded errors.

The server reads the query and the passage from the prompt it is sent, looks them up in the sample's queries and
corpus (the ``document`` chunker's ``join``: title, a space, text), and replies ``##final score: N`` with N from
the real grade (2 -> 3, 1 -> 2, judged 0 -> 1, not judged -> 0), except for a seeded share of pairs where it errs
(a relevant passage gets 0, any other 3). ``garble_every`` > 0 makes the first asking of every n-th distinct pair
a reply without a score (the judge must re-ask). It counts the calls per (query id, document id). Nothing of
ragassay's logic is imitated: the fake only looks grades up, at the far side of the HTTP boundary.
"""

from __future__ import annotations

import collections
import hashlib
import json
import re
import threading
from pathlib import Path

from servers.openai_chat import OpenAIChatServer, Turn

SAMPLE = Path(__file__).resolve().parent / "data" / "beir_sample"
ASKED = re.compile(r"\nQuery: (.*?)\nPassage: (.*?)\n\nSplit this problem into steps:", re.S)


def real_qrels() -> dict[str, dict[str, int]]:
    """The sample's qrels, read here with plain splitting (not by the code under test)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (SAMPLE / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, docid, grade = line.split("\t")
        qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


def _records(name: str) -> list[dict]:
    return [json.loads(line) for line in (SAMPLE / name).read_text(encoding="utf-8").splitlines() if line.strip()]


class RelevanceJudge:
    """Replies with grades from the real qrels; ``error_rate`` of the pairs (by a seeded hash) are wrong."""

    def __init__(self, error_rate: float = 0.0, seed: int = 0, garble_every: int = 0):
        self.error_rate, self.seed, self.garble_every = error_rate, seed, garble_every
        self.qrels = real_qrels()
        self.queries = {r["text"]: r["_id"] for r in _records("queries.jsonl")}
        self.docs = {(f"{r['title']} {r['text']}").strip(): r["_id"] for r in _records("corpus.jsonl")}
        self.calls: collections.Counter[tuple[str, str]] = collections.Counter()
        self.garbled: set[tuple[str, str]] = set()
        self.lock = threading.Lock()

    def wrong(self, qid: str, docid: str) -> bool:
        """Whether the judge errs on this pair (seeded, the same in every process)."""
        digest = hashlib.sha256(f"{self.seed}:{qid}:{docid}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.error_rate

    def grade(self, qid: str, docid: str) -> int:
        """The grade the judge replies for a pair."""
        real = self.qrels.get(qid, {}).get(docid)
        grade = {2: 3, 1: 2, 0: 1, None: 0}[real]
        if self.wrong(qid, docid):
            return 0 if grade >= 2 else 3
        return grade

    def __call__(self, request) -> Turn:
        messages = (request.json or {}).get("messages", [])
        prompt = next(m["content"] for m in messages if m.get("role") == "user")
        found = ASKED.search(prompt)
        pair = (self.queries[found.group(1)], self.docs[found.group(2)])
        with self.lock:
            self.calls[pair] += 1
            first = len(messages) == 1 and pair not in self.garbled
            garble = self.garble_every and first and len(self.calls) % self.garble_every == 0
            if garble:
                self.garbled.add(pair)
        if garble:
            return Turn(text="This passage looks relevant to me.")
        return Turn(text=f"##final score: {self.grade(*pair)}")


def relevance_server(judge: RelevanceJudge) -> OpenAIChatServer:
    server = OpenAIChatServer()
    server.default = judge
    return server
