"""A scripted model for the reference agents on a loopback OpenAI chat server: it follows the agents' prompts for a
small 2-hop corpus (project -> client -> city), reading the sources it is given, never a table of answers.

- a Self-Ask decomposition prompt gets ``Follow up:`` lines (the second with ``#1``; :func:`skipping` plans only
  the first, as a model that skips the second retrieval would);
- an intermediate-answer prompt gets the client named by "commissioned by <Client>" in its sources ("unknown" when
  no source names one);
- a ReAct prompt gets the next Thought/Action from the observations so far: search the client, then search where
  that client is based, then ``Finish[<city>]`` (:func:`searching_forever` never finishes);
- the answer prompt gets "<city> [n]" from the source "<Client> is based in <City>", or "I don't know".

Every reply has fixed token counts per prompt kind (:data:`USAGE`), so tests can sum them exactly.
"""

from __future__ import annotations

import re

from servers.openai_chat import Turn

DOCS = {
    "falcon.md": "Project Falcon was commissioned by Northwind Traders. Project Falcon builds a weather satellite.",
    "northwind.md": "Northwind Traders is based in Oslo. Northwind Traders sells marine equipment.",
    "heron.md": "Project Heron was commissioned by Bluefin Labs. Project Heron restores river wetlands.",
    "bluefin.md": "Bluefin Labs is based in Lisbon. Bluefin Labs studies coral reefs.",
    "bees.md": "Bees make honey from nectar in their hives.",
}
#: question -> (its two sub-questions, the gold document of each hop, the final answer)
QUESTIONS = {
    "Where is the client that commissioned Project Falcon based?": (
        ("Which client commissioned Project Falcon?", "Where is #1 based?"),
        ("corpus/falcon.md", "corpus/northwind.md"),
        "Oslo",
    ),
    "Where is the client that commissioned Project Heron based?": (
        ("Which client commissioned Project Heron?", "Where is #1 based?"),
        ("corpus/heron.md", "corpus/bluefin.md"),
        "Lisbon",
    ),
}
USAGE = {"decompose": (50, 12, 0), "read": (80, 4, 0), "act": (120, 20, 0), "answer": (200, 9, 0)}

_COMMISSIONED = re.compile(r"commissioned by ([A-Z]\w+ [A-Z]\w+)")
_BASED = re.compile(r"([A-Z]\w+ [A-Z]\w+) is based in ([A-Z]\w+)")


def _last_user(request) -> str:
    return next(m["content"] for m in reversed(request.json["messages"]) if m["role"] == "user")


def _question(prompt: str) -> str:
    return re.findall(r"^Question: (.+)$", prompt, re.M)[-1].strip()


def _plan(prompt: str, hops: int) -> Turn:
    sub_questions = QUESTIONS[_question(prompt)][0][:hops]
    lines = "\n".join(f"Follow up: {q}" for q in sub_questions)
    return Turn(text=f" Yes.\n{lines}", usage=USAGE["decompose"])


def _read(prompt: str) -> Turn:
    found = _COMMISSIONED.search(prompt.split("Follow up:")[0])
    return Turn(text=found.group(1) if found else "unknown", usage=USAGE["read"])


def _act(prompt: str, finish: bool = True) -> Turn:
    observations = re.findall(r"^Observation \d+: (.*)$", prompt.split("Question: ")[-1], re.M)
    step = len(observations) + 1
    seen = " ".join(observations)
    based, client = _BASED.search(seen), _COMMISSIONED.search(seen)
    if based and finish:
        text = f"{based.group(1)} is based in {based.group(2)}.\nAction {step}: Finish[{based.group(2)}]"
    elif client:
        text = f"The client is {client.group(1)}. I need where it is based.\nAction {step}: Search[Where is {client.group(1)} based?]"
    else:
        sub_question = QUESTIONS[_question(prompt)][0][0]
        text = f"I need to find the client first.\nAction {step}: Search[{sub_question}]"
    return Turn(text=text, usage=USAGE["act"])


def _answer(prompt: str) -> Turn:
    for number, source in re.findall(r"^\[(\d+)\] (.*)$", prompt, re.M):
        based = _BASED.search(source)
        if based:
            return Turn(text=f"{based.group(2)} [{number}].", usage=USAGE["answer"])
    return Turn(text="I don't know.", usage=USAGE["answer"])


def _respond(request, hops: int = 2, finish: bool = True) -> Turn:
    prompt = _last_user(request)
    if prompt.rstrip().endswith("Are follow up questions needed here:"):
        return _plan(prompt, hops)
    if prompt.rstrip().endswith("Intermediate answer:"):
        return _read(prompt)
    if re.search(r"Thought \d+:\s*$", prompt):
        return _act(prompt, finish)
    return _answer(prompt)


def following(request) -> Turn:
    """The reply of a model that follows every agent prompt."""
    return _respond(request)


def skipping(request) -> Turn:
    """As :func:`following`, but the decomposition plans only the first hop (the second retrieval is skipped)."""
    return _respond(request, hops=1)


def searching_forever(request) -> Turn:
    """As :func:`following`, but a ReAct step never finishes (it searches the client again and again)."""
    return _respond(request, finish=False)


def planned(plans: dict[str, list[str]], hops: int | None = None):
    """A responder for any corpus (e.g. GRAMMAR questions whose hops carry their sub-questions): the decomposition
    of a question is ``plans[question]`` (its first ``hops``), a ReAct step searches the next planned sub-question
    and finishes after the last; an intermediate-answer or answer prompt gets the first sentence of source [1]."""

    def respond(request) -> Turn:
        prompt = _last_user(request)
        if prompt.rstrip().endswith("Are follow up questions needed here:"):
            lines = "\n".join(f"Follow up: {q}" for q in plans[_question(prompt)][:hops])
            return Turn(text=f" Yes.\n{lines}", usage=USAGE["decompose"])
        if re.search(r"Thought \d+:\s*$", prompt):
            plan = plans[_question(prompt)][:hops]
            step = len(re.findall(r"^Observation \d+: ", prompt.split("Question: ")[-1], re.M)) + 1
            action = f"Search[{plan[step - 1]}]" if step <= len(plan) else "Finish[see the sources]"
            return Turn(text=f"Next step.\nAction {step}: {action}", usage=USAGE["act"])
        first = re.search(r"^\[1\] ([^.\n]*)", prompt, re.M)
        kind = "read" if prompt.rstrip().endswith("Intermediate answer:") else "answer"
        return Turn(text=first.group(1) if first else "unknown", usage=USAGE[kind])

    return respond
