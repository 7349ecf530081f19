"""The prompts of the reference agents, quoted from their sources and versioned, and the parsers of their replies.

- ``decomposing_agent`` plans its sub-questions with **Self-Ask** (Press et al. 2022, "Measuring and Narrowing the
  Compositionality Gap in Language Models", section 3 and Figure 3: the prompt format "Are follow up questions
  needed here:" / "Follow up:" / "Intermediate answer:" / "So the final answer is:"). :data:`SELF_ASK_EXEMPLAR` is
  the paper's craigslist exemplar verbatim. Adapted (:data:`DECOMPOSE_PROMPT`): every follow-up question is planned
  before any search, and one that needs an earlier answer says ``#n`` where that answer goes (filled in after the
  search, from the model's intermediate answer: :data:`READ_PROMPT`, which asks for the answer itself, not a
  sentence, because it is put into a query).
- ``iterative_agent`` searches with **ReAct** (Yao et al. 2023, "ReAct: Synergizing Reasoning and Acting in Language
  Models", section 3 and Appendix C.1; the HotpotQA instruction of the authors' ``hotpotqa.ipynb``, quoted verbatim
  as :data:`REACT_INSTRUCTION`). Adapted (:data:`REACT_PROMPT`): two actions, ``Search[query]`` over the document
  collection and ``Finish[answer]`` (Wikipedia's ``Lookup`` dropped), and one worked example of our own (the
  paper's are Wikipedia trajectories); the model writes one Thought and one Action per call, as the notebook's
  stop sequence ``\\nObservation {i}:`` makes it.

A prompt's version (``PROMPT_VERSIONS``) is stored in every output's trace; an overridden prompt is stored as
``custom:<sha256 prefix>``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

#: Self-Ask's second exemplar, verbatim (Press et al. 2022, Figure 3 and the authors' self-ask prompt).
SELF_ASK_EXEMPLAR = (
    "Question: When was the founder of craigslist born?\n"
    "Are follow up questions needed here: Yes.\n"
    "Follow up: Who was the founder of craigslist?\n"
    "Intermediate answer: Craigslist was founded by Craig Newmark.\n"
    "Follow up: When was Craig Newmark born?\n"
    "Intermediate answer: Craig Newmark was born on December 6, 1952.\n"
    "So the final answer is: December 6, 1952"
)

#: ReAct's HotpotQA instruction, verbatim (Yao et al. 2023; ``hotpotqa.ipynb`` of github.com/ysymyth/ReAct).
REACT_INSTRUCTION = (
    "Solve a question answering task with interleaving Thought, Action, Observation steps. Thought can reason about "
    "the current situation, and Action can be three types: \n"
    "(1) Search[entity], which searches the exact entity on Wikipedia and returns the first paragraph if it exists. "
    "If not, it will return some similar entities to search.\n"
    "(2) Lookup[keyword], which returns the next sentence containing keyword in the current passage.\n"
    "(3) Finish[answer], which returns the answer and finishes the task.\n"
    "Here are some examples.\n"
)

#: Self-Ask adapted to plan every follow-up question before searching (version ``self-ask-decompose/1``).
DECOMPOSE_PROMPT = (
    "Break the question below into the follow up questions that must be looked up to answer it, in the self-ask "
    "format: one follow up question per fact to look up, in the order they must be answered. You plan them before "
    "any search, so you do not know the intermediate answers yet: where a follow up question needs the answer of an "
    "earlier one, write #1 for the answer of the first follow up question, #2 for the second, and so on; it is "
    "filled in after the search. If the question needs no follow up questions, write "
    '"Are follow up questions needed here: No." Write only the lines of the format, nothing else.\n\n'
    "This is how self-ask answers a question when the intermediate answers are known:\n\n"
    f"{SELF_ASK_EXEMPLAR}\n\n"
    "Planned before any search, its follow up questions are written:\n\n"
    "Question: When was the founder of craigslist born?\n"
    "Are follow up questions needed here: Yes.\n"
    "Follow up: Who was the founder of craigslist?\n"
    "Follow up: When was #1 born?\n\n"
    "Question: {question}\n"
    "Are follow up questions needed here:"
)

#: Self-Ask's intermediate answer, read from the retrieved sources (version ``self-ask-read/1``).
READ_PROMPT = (
    "Answer the follow up question from the numbered sources below, as self-ask's intermediate answer. Write only "
    "the answer itself (a name, a number or a short phrase), not a sentence: it is put into the next follow up "
    'question. If the sources do not contain it, write "unknown".\n\n'
    "Sources:\n{sources}\n\n"
    "Follow up: {sub_question}\n"
    "Intermediate answer:"
)

#: ReAct adapted to a document collection (version ``react-search/1``).
REACT_PROMPT = (
    "Solve a question answering task with interleaving Thought, Action, Observation steps. Thought can reason about "
    "the current situation, and Action can be two types: \n"
    "(1) Search[query], which searches the document collection with the query and returns the best passages.\n"
    "(2) Finish[answer], which returns the answer and finishes the task.\n"
    "Write one Thought and one Action, then stop: the Observation is given to you.\n"
    "Here is an example.\n\n"
    "Question: When was the founder of craigslist born?\n"
    "Thought 1: I need to search the founder of craigslist, then find when the founder was born.\n"
    "Action 1: Search[founder of craigslist]\n"
    "Observation 1: [1] Craigslist was founded by Craig Newmark.\n"
    "Thought 2: The founder of craigslist is Craig Newmark. I need to search Craig Newmark and find when he was born.\n"
    "Action 2: Search[Craig Newmark born]\n"
    "Observation 2: [1] Craig Newmark was born on December 6, 1952.\n"
    "Thought 3: Craig Newmark was born on December 6, 1952, so the answer is December 6, 1952.\n"
    "Action 3: Finish[December 6, 1952]\n\n"
    "Question: {question}\n"
    "{scratchpad}"
)

PROMPT_VERSIONS = {
    DECOMPOSE_PROMPT: "self-ask-decompose/1",
    READ_PROMPT: "self-ask-read/1",
    REACT_PROMPT: "react-search/1",
}


def prompt_version(prompt: str) -> str:
    """The version of a shipped prompt, or ``custom:<sha256 prefix>`` for an overridden one."""
    return PROMPT_VERSIONS.get(prompt) or "custom:" + hashlib.sha256(prompt.encode()).hexdigest()[:12]


def fill(template: str, **values: str) -> str:
    """``template`` with each ``{name}`` replaced by its value (plain replacement: other braces stay)."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def missing_placeholders(template: str, *names: str) -> list[str]:
    """The ``{name}`` placeholders that ``template`` lacks."""
    return ["{" + name + "}" for name in names if "{" + name + "}" not in template]


def numbered(texts: list[str]) -> str:
    """``[1] text`` lines, as the naive RAG numbers its sources."""
    return "\n".join(f"[{i}] {text}" for i, text in enumerate(texts, start=1))


# -- replies -------------------------------------------------------------------------------------------------------

_FOLLOW_UP = re.compile(r"^\s*(?:[-*\d.)]+\s*)?follow[ -]?up(?:\s+question)?\s*\d*\s*:\s*(.*?)\s*$", re.I | re.M)
_NO_FOLLOW_UP = re.compile(r"^\W*(?:are follow[ -]?up questions needed here\s*:\s*)?no\b", re.I)
_PLACEHOLDER = re.compile(r"#(\d+)")


@dataclass
class Plan:
    """The sub-questions parsed from a decomposition reply; ``fallback`` says why the question itself stands in."""

    sub_questions: list[str]
    decision: str
    fallback: str | None = None
    dropped: list[str] = field(default_factory=list)


def parse_plan(reply: str, question: str, max_hops: int) -> Plan:
    """The follow-up questions of a Self-Ask decomposition ``reply`` (at most ``max_hops``; the rest in
    ``dropped``). "No" follow-ups: the question itself, as Self-Ask answers directly. Neither: the question itself,
    with the reason in ``fallback``."""
    found = [q for q in _FOLLOW_UP.findall(reply) if q]
    if found:
        return Plan(found[:max_hops], "follow up questions", dropped=found[max_hops:])
    if _NO_FOLLOW_UP.match(reply.strip()):
        return Plan([question], "no follow up questions needed: the question itself")
    reason = "the reply has no 'Follow up:' line and does not say 'No': the question itself is the only sub-question"
    return Plan([question], "fallback", fallback=reason)


def placeholders(sub_question: str) -> list[int]:
    """The earlier answers (1-based ``#n``) that ``sub_question`` refers to."""
    return [int(n) for n in _PLACEHOLDER.findall(sub_question)]


def fill_answers(sub_question: str, answers: dict[int, str]) -> str:
    """``sub_question`` with each ``#n`` that has an answer replaced by it (others stay as written)."""
    return _PLACEHOLDER.sub(lambda m: answers.get(int(m.group(1)), m.group(0)), sub_question)


def parse_intermediate(reply: str) -> str | None:
    """The intermediate answer of a read ``reply`` (its first line, without a repeated label or a final period);
    None when it is empty or says "unknown"."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if not lines:
        return None
    answer = re.sub(r"^intermediate answer\s*:\s*", "", lines[0], flags=re.I).strip().rstrip(".").strip()
    if not answer or answer.strip("\"'").lower() in ("unknown", "i don't know", "i do not know"):
        return None
    return answer


_ACTION = re.compile(r"action\s*\d*\s*:\s*(search|finish)\s*\[(.*)\]", re.I)
_THOUGHT = re.compile(r"^\s*thought\s*\d*\s*:\s*", re.I)


@dataclass
class Action:
    """A ReAct step parsed from a reply: ``kind`` "search" or "finish" (None: unparseable), its argument, the
    thought before it."""

    kind: str | None
    argument: str
    thought: str


def parse_action(reply: str) -> Action:
    """The first ``Action: Search[...]`` or ``Finish[...]`` of a ReAct ``reply`` (the text before it is the
    thought); ``kind`` None when there is none, or a search has an empty query."""
    for line_number, line in enumerate(reply.splitlines()):
        match = _ACTION.search(line)
        if match:
            thought = " ".join(reply.splitlines()[:line_number]).strip()
            kind, argument = match.group(1).lower(), match.group(2).strip()
            if kind == "search" and not argument:
                break
            return Action(kind, argument, _THOUGHT.sub("", thought))
    return Action(None, "", _THOUGHT.sub("", reply.strip().splitlines()[0] if reply.strip() else ""))
