"""A scripted judge model for the claim metrics: an OpenAI-compatible loopback server whose extraction and
checking replies come from RAGChecker's reference file (tests/data/ragchecker/checking_outputs.json), with
optional injected faults.

The server reads the question ragassay asked (the first user message: the extraction or the checking prompt),
finds the text (or the reference and the claims) in the reference file, and replies with RAGChecker's claims or
labels as the structured JSON the judge asked for. Nothing of ragassay's logic is imitated: the fake only looks
answers up, at the far side of the HTTP boundary.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from servers.base import Reply
from servers.openai_chat import OpenAIChatServer, Turn, malformed, server_error

REFERENCE = Path(__file__).parents[2] / "data" / "ragchecker" / "checking_outputs.json"
EXTRACT = re.compile(r"Question the text answers:\n(.*?)\n\nText:\n(.*)\n\Z", re.S)
CHECK = re.compile(r"Question \(for context\):\n(.*?)\n\nReference:\n(.*?)\n\nClaims:\n(.*)\n\Z", re.S)
FAULTS = ("http_500", "malformed_body", "not_json", "wrong_count")


def results() -> list[dict[str, Any]]:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))["results"]


def render(claim: list[str]) -> str:
    return "(" + "; ".join(claim) + ")"


class ReferenceJudge:
    """Replies from the reference file; ``fault_every`` > 0 injects faults (see :meth:`_fault`); a checking
    question whose reference contains ``broken`` always gets a wrong label count."""

    def __init__(self, fault_every: int = 0, broken: str | None = None):
        self.fault_every, self.broken = fault_every, broken
        self.claims: dict[tuple[str, str], list[list[str]]] = {}
        self.labels: dict[tuple[str, str, str], str] = {}
        self.faulted: dict[str, str] = {}  # question -> the fault injected on its first asking
        self.seen: dict[str, int] = {}  # question -> its index among the distinct questions of its kind
        self.counts = {len(FAULTS): 0, len(FAULTS) - 1: 0}  # distinct questions so far: checking, extraction
        self.lock = threading.Lock()
        for r in results():
            q = r["query"]
            self.claims[(q, r["response"])] = r["response_claims"]
            self.claims[(q, r["gt_answer"])] = r["gt_answer_claims"]
            for claim, label in zip(r["response_claims"], r["answer2response"]):
                self.labels[(q, r["gt_answer"], render(claim))] = label
            for claim, label in zip(r["gt_answer_claims"], r["response2answer"]):
                self.labels[(q, r["response"], render(claim))] = label
            for c, chunk in enumerate(r["retrieved_context"]):
                for claims, matrix in (
                    (r["response_claims"], "retrieved2response"),
                    (r["gt_answer_claims"], "retrieved2answer"),
                ):
                    for claim, row in zip(claims, r[matrix]):
                        self.labels[(q, chunk["text"], render(claim))] = row[c]

    def __call__(self, request) -> Turn | Reply:
        messages = (request.json or {}).get("messages", [])
        asked = next(m["content"] for m in messages if m.get("role") == "user")
        fault = self._fault(asked, len(messages))
        if fault == "http_500":
            return server_error(500)
        if fault == "malformed_body":
            return malformed()
        if fault == "not_json":
            return Turn(text="Entailment, I think.")
        if (found := EXTRACT.search(asked)) is not None:
            claims = self.claims[(found.group(1), found.group(2))]
            triplets = [{"subject": s, "predicate": p, "object": o} for s, p, o in claims]
            return Turn(text=json.dumps({"explanation": "The text states these facts.", "claims": triplets}))
        found = CHECK.search(asked)
        question, reference, listed = found.group(1), found.group(2), found.group(3).split("\n")
        verdicts = []
        for number, line in enumerate(listed, start=1):
            claim = line.split(". ", 1)[1]
            verdicts.append(
                {"claim": number, "explanation": "Compared.", "label": self.labels[(question, reference, claim)]}
            )
        if fault == "wrong_count" or (self.broken is not None and self.broken in reference):
            verdicts = verdicts[:-1] if len(verdicts) > 1 else verdicts * 2
        return Turn(text=json.dumps({"verdicts": verdicts}))

    def _fault(self, asked: str, turns: int) -> str | None:
        """The fault for this request: on the first asking (one message) of every ``fault_every``-th distinct
        extraction question and every ``fault_every``-th distinct checking question (in arrival order), once; the
        kinds in turn (a wrong label count only for a checking question)."""
        if not self.fault_every or turns != 1:
            return None
        kinds = FAULTS if CHECK.search(asked) else FAULTS[:3]
        with self.lock:
            if asked in self.seen:
                return None
            seen = self.counts[len(kinds)]
            self.counts[len(kinds)] += 1
            self.seen[asked] = seen
            if seen % self.fault_every:
                return None
            kind = kinds[(seen // self.fault_every) % len(kinds)]
            self.faulted[asked] = kind
            return kind


def judge_server(judge: ReferenceJudge) -> OpenAIChatServer:
    server = OpenAIChatServer()
    server.default = judge
    return server
