"""A scripted judge model for the per-turn conversation metrics: an OpenAI-compatible loopback server that replies
to the support, behaviour and retention prompts from a script keyed by the answer being judged, with optional
injected faults; and a small conversational project (samples, precomputed outputs) to run them on.

The server only looks the judged answer up in :data:`SCRIPT` and writes the reply the prompt asks for (1-based
context numbers, turn numbers as the prompt shows them): none of ragassay's logic is imitated. Faults are injected
on the first asking of every ``fault_every``-th distinct question, the kinds in turn: an HTTP 500, a cut-off body,
a reply that is not JSON, and a reply that is JSON but invalid (a turn that is not earlier, a behaviour that is not
one of the three, a status that is not one of the three): the first two are retried by the backend, the last two
re-asked by the judge base. An answer containing ``BROKEN`` always gets the invalid reply.
"""

from __future__ import annotations

import json
import re
from typing import Any

from servers.faults import FaultSchedule
from servers.openai_chat import OpenAIChatServer, Turn

ANSWER = re.compile(r"\n(?:Answer|Assistant's reply):\n(.*)\n\Z", re.S)
KINDS = {
    "You check where the claims": "support",
    "You classify what an assistant did": "behaviour",
    "You check whether an assistant remembers": "retention",
}

ANSWER_1 = "The Nile is about 6,650 km long."
ANSWER_2 = (
    "The Nile flows into the Mediterranean Sea. The Nile is about 6,650 km long. Purple hippos live in its delta."
)
ANSWER_3 = "Which boat trip do you mean?"
ANSWER_4 = "The Moon is made of rock and dust."
ANSWER_5 = "Mining Corp owns the mines on the Moon."
BROKEN = "BROKEN answer about the Nile."

#: answer -> (support claims (text, support, turn, 1-based context), behaviour, retention facts (fact, turn, status))
SCRIPT: dict[str, tuple[list[tuple], str, list[tuple]]] = {
    ANSWER_1: ([(ANSWER_1, "context", None, 1)], "answer", []),
    ANSWER_2: (
        [
            ("The Nile flows into the Mediterranean Sea.", "context", None, 2),
            ("The Nile is about 6,650 km long.", "history", 1, None),
            ("Purple hippos live in the Nile delta.", "none", None, None),
        ],
        "answer",
        [("The user lives in Cairo.", 1, "kept"), ("The user plans a boat trip on the Nile.", 1, "kept")],
    ),
    ANSWER_3: (
        [],
        "clarify",
        [("The user lives in Cairo.", 1, "kept"), ("The user plans a boat trip on the Nile.", 1, "asked_again")],
    ),
    ANSWER_4: ([("The Moon is made of rock and dust.", "context", None, 1)], "answer", []),
    ANSWER_5: ([("Mining Corp owns the mines on the Moon.", "none", None, None)], "answer", []),
    BROKEN: ([], "answer", []),
}


def conversation(copy: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(samples, precomputed outputs) of two conversations, ``nile-<copy>`` (3 turns) and ``moon-<copy>`` (2);
    copies differ in their questions' ``Case <copy>: `` prefix only, so every copy asks the judge distinct questions."""
    tag = f"Case {copy}: "
    nile, moon = f"nile-{copy}", f"moon-{copy}"
    q1 = tag + "I live in Cairo and I plan a boat trip on the Nile. How long is the Nile?"
    q4 = tag + "What is the Moon made of?"
    turns = [
        (nile, 1, q1, "answerable", [], ANSWER_1, ["The Nile is about 6,650 km long."]),
        (nile, 2, tag + "Where does it end?", "answerable", [("user", q1), ("agent", ANSWER_1)], ANSWER_2,
         ["Africa has many rivers.", "The Nile flows north into the Mediterranean Sea."]),
        (nile, 3, tag + "And the trip?", "underspecified",
         [("user", q1), ("agent", ANSWER_1), ("user", tag + "Where does it end?"), ("agent", ANSWER_2)], ANSWER_3, []),
        (moon, 1, q4, "answerable", [], ANSWER_4, ["The Moon is made of rock and dust."]),
        (moon, 2, tag + "Who owns its mines?", "unanswerable", [("user", q4), ("agent", ANSWER_4)], ANSWER_5,
         ["The Moon has no mines."]),
    ]  # fmt: skip
    samples, outputs = [], []
    for cid, turn, question, label, history, answer, contexts in turns:
        qid = f"{cid}::{turn}"
        history = [{"speaker": s, "text": t} for s, t in history]
        samples.append(
            {"question_id": qid, "question": question, "conversation_id": cid, "turn": turn, "history": history,
             "answerability": label, "reference_answers": [answer]}
        )  # fmt: skip
        outputs.append({"question_id": qid, "answer": answer, "contexts": contexts})
    return samples, outputs


def support_reply(answer: str) -> dict[str, Any]:
    claims = [
        {"text": t, "explanation": "Compared with the turn.", "support": s, "turn": turn, "context": c}
        for t, s, turn, c in SCRIPT[answer][0]
    ]
    return {"explanation": "The answer states these facts.", "claims": claims}


def behaviour_reply(answer: str) -> dict[str, Any]:
    return {"explanation": "What the reply does.", "behaviour": SCRIPT[answer][1]}


def retention_reply(answer: str) -> dict[str, Any]:
    facts = [
        {"fact": f, "turn": turn, "explanation": "How the reply treats it.", "status": s}
        for f, turn, s in SCRIPT[answer][2]
    ]
    return {"explanation": "The user said where they live and what they plan.", "facts": facts}


REPLIES = {"support": support_reply, "behaviour": behaviour_reply, "retention": retention_reply}
INVALID = {
    "support": {"explanation": "x", "claims": [{"text": "t", "explanation": "e", "support": "history", "turn": 99}]},
    "behaviour": {"explanation": "x", "behaviour": "answered politely"},
    "retention": {"explanation": "x", "facts": [{"fact": "f", "turn": 1, "explanation": "e", "status": "forgotten"}]},
}


class ConversationJudge:
    """The scripted judge (module docstring); ``faulted`` maps each faulted question to its fault."""

    def __init__(self, fault_every: int = 0):
        self.schedule = FaultSchedule(fault_every)
        self.faulted, self.seen = self.schedule.faulted, self.schedule.seen

    def __call__(self, request) -> Any:
        messages = (request.json or {}).get("messages", [])
        asked = next(m["content"] for m in messages if m.get("role") == "user")
        kind = next(kind for start, kind in KINDS.items() if asked.startswith(start))
        answer = ANSWER.search(asked).group(1)
        fault = self.schedule.fault(asked, len(messages)) or ("invalid" if "BROKEN" in answer else None)
        faulty = FaultSchedule.reply(fault, "The answer is fine, I think.", json.dumps(INVALID[kind]))
        if faulty is not None:
            return faulty
        return Turn(text=json.dumps(REPLIES[kind](answer)))


def judge_server(judge: ConversationJudge) -> OpenAIChatServer:
    server = OpenAIChatServer()
    server.default = judge
    return server


def project_config(url: str, metrics: list[str], outputs: str = "outputs.jsonl") -> str:
    """A ragassay.toml scoring precomputed outputs with ``metrics`` at the judge ``url`` (offline ones: no
    generator)."""
    generator = f'name = "openai"\noptions = {{ model = "judge", base_url = "{url}/v1", backoff_s = 0.0 }}\n'
    tables = ""
    for name in metrics:
        tables += f'[[evaluation.metrics]]\nname = "{name}"\n'
        if not name.endswith("_offline"):
            tables += f"[evaluation.metrics.options.generator]\n{generator}"
    return (
        '[dataset]\noptions = { path = "qa.jsonl" }\n[systems.s]\nrag = "precomputed"\n'
        f'options = {{ path = "{outputs}" }}\n{tables}'
    )


COPIES = 5  # conversations nile-0..4 and moon-0..4: 25 turns, 65 distinct judge questions


def write_conversations(root, config: str, broken: bool = False):
    """Write qa.jsonl, outputs.jsonl (``COPIES`` copies of :func:`conversation`; with ``broken``, the answer of
    nile-0::2 is :data:`BROKEN`) and ``config`` under ``root``; returns the config path."""
    from conftest import write_project

    samples, outputs = [], []
    for copy in range(COPIES):
        more_samples, more_outputs = conversation(copy)
        samples += more_samples
        outputs += more_outputs
    if broken:
        outputs[1]["answer"] = BROKEN
    root.mkdir(parents=True, exist_ok=True)
    (root / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs), encoding="utf-8")
    return write_project(root, config, qa=samples, docs={})


def scored(root, judge: ConversationJudge, metrics: list[str], broken: bool = False):
    """(stored records by (question id, label), judge calls) of a run of ``metrics`` at the scripted judge."""
    import ragassay

    with judge_server(judge) as server:
        run = ragassay.run(write_conversations(root, project_config(server.url, metrics), broken))
        records = {(r.question_id, r.label): r for r in run.data().scores}
        return records, server.calls
