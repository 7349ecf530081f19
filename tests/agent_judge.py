"""A scripted judge model for the trajectory judges (``trajectory_goal``, ``step_blame_judge``) and a tiny agent
project to run them on.

- :class:`FixedAgent` (rag ``agentfix/fixed_agent``, registered in-process by :data:`PLUGIN`): answers each sample
  with the fixed output of its scenario, a trajectory included (the precomputed adapter carries no trajectory).
- :class:`AgentJudge`: an OpenAI-compatible loopback judge that looks the judged answer up in :data:`SCENARIOS`
  and writes the reply the prompt asks for; it imitates none of ragassay's logic. Faults are injected on the first
  asking of every ``fault_every``-th distinct question, the kinds in turn: an HTTP 500, a cut-off body, a reply
  that is not JSON, and a reply that is JSON but invalid (a verdict that is not one of the three; a step that does
  not exist): the first two are retried by the backend, the last two re-asked by the judge base. An answer
  containing ``BROKEN`` always gets the invalid reply.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ragassay import RAGOutput, RAGSystem, Step, TokenUsage, hookimpl

from servers.faults import FaultSchedule
from servers.openai_chat import OpenAIChatServer, Turn

ANSWER = re.compile(r"\nFinal answer:\n(.*)\n\Z", re.S)
KINDS = {"You judge whether an AI agent achieved": "goal", "You find the first step at which": "blame"}
DOCS = {
    "p1": "Project Apollo is led by Dana Reyes.",
    "p2": "Project Apollo's client is Acme Corp.",
    "x1": "The cafeteria opens at 8.",
}


def _retrieval(i: int, query: str, ids: list[str], parent: str | None = None) -> Step:
    return Step(id=f"s{i}", kind="retrieval", query=query, context_ids=ids, document_ids=ids, parent_id=parent)


def _model(i: int, text: str, parent: str | None = None) -> Step:
    usage = TokenUsage(input_tokens=120, output_tokens=30, calls=1)
    return Step(id=f"s{i}", kind="model_call", name="agent-llm", output=text, usage=usage, parent_id=parent)


def _answer(i: int, text: str) -> Step:
    return Step(id=f"s{i}", kind="answer", output=text)


#: scenario -> (answer, trajectory, goal verdict, (blame, 1-based step or None))
SCENARIOS: dict[str, tuple[str, list[Step], str, tuple[str, int | None]]] = {}


def _scenario(key: str, answer: str, steps: list[Step], goal: str, blame: tuple[str, int | None]) -> None:
    SCENARIOS[key] = (answer, steps, goal, blame)


_scenario(
    "ok",
    "Dana Reyes leads Project Apollo, whose client is Acme Corp.",
    [_model(1, "Look up the lead, then the client."), _retrieval(2, "Apollo lead", ["p1"]),
     _retrieval(3, "Apollo client", ["p2"]), _answer(4, "Dana Reyes leads Project Apollo, whose client is Acme Corp.")],
    "yes", ("ok", None),
)  # fmt: skip
_scenario(
    "missed",
    "Project Apollo's client is Globex.",
    [_model(1, "Find the client."), _retrieval(2, "Apollo", ["p1"]), _retrieval(3, "client list", ["x1"]),
     _answer(4, "Project Apollo's client is Globex.")],
    "no", ("missed_hop", 3),
)  # fmt: skip
_scenario(
    "tool_error",
    "I could not look up the client.",
    [_model(1, "Query the CRM."), Step(id="s2", kind="tool_call", name="crm", arguments={"project": "Apollo"},
     error="HTTP 503 from the CRM"), _answer(3, "I could not look up the client.")],
    "no", ("tool_error", 2),
)  # fmt: skip
_scenario(
    "partly",
    "Dana Reyes leads it; the budget is 2 million.",
    [_retrieval(1, "Apollo lead and budget", ["p1"]), _answer(2, "Dana Reyes leads it; the budget is 2 million.")],
    "partly", ("unsupported_answer", 2),
)  # fmt: skip
_scenario(
    "wrong_tool",
    "It is sunny in Apollo.",
    [Step(id="s1", kind="tool_call", name="weather", arguments={"city": "Apollo"}, result={"sky": "sunny"}),
     _answer(2, "It is sunny in Apollo.")],
    "no", ("wrong_tool", 1),
)  # fmt: skip
_scenario(
    "nested",
    "Acme Corp is the client of Project Apollo.",
    [Step(id="s1", kind="agent", name="researcher"), _retrieval(2, "Apollo client", ["p2"], parent="s1"),
     _model(3, "The client is Acme Corp.", parent="s1"), _answer(4, "Acme Corp is the client of Project Apollo.")],
    "yes", ("ok", None),
)  # fmt: skip
_scenario(
    "broken",
    "BROKEN answer about Apollo.",
    [_retrieval(1, "Apollo", ["p1"]), _answer(2, "BROKEN answer about Apollo.")],
    "yes", ("ok", None),
)  # fmt: skip

BY_ANSWER = {answer: key for key, (answer, *_rest) in SCENARIOS.items()}
SCORED = [key for key in SCENARIOS if key != "broken"]


def samples(copies: int, broken: bool = False) -> list[dict[str, Any]]:
    """``copies`` copies of every scenario (``<scenario>-<copy>``), questions prefixed ``Case <copy>:`` so that
    every copy asks the judge distinct questions; the ``broken`` scenario only when asked."""
    keys = [*SCORED, "broken"] if broken else SCORED
    return [
        {"question_id": f"{key}-{copy}", "question": f"Case {copy}: Who leads Project Apollo and who is its client?"}
        for copy in range(copies)
        for key in keys
    ]


class FixedAgent(RAGSystem):
    """Answers each sample with its scenario's fixed output and trajectory (scripted; the far side of the run)."""

    name = "fixed_agent"
    retrieval = "decides"

    async def answer(self, sample):
        answer, steps, _goal, _blame = SCENARIOS[sample.question_id.rsplit("-", 1)[0]]
        ids = [cid for step in steps for cid in step.context_ids]
        return RAGOutput(answer=answer, contexts=[DOCS[i] for i in ids], context_ids=ids, trajectory=steps)


class _Plugin:
    @hookimpl
    def register_rags(self, register):
        register(FixedAgent)


PLUGIN = ("agentfix", _Plugin())


def goal_reply(key: str) -> dict[str, Any]:
    return {"explanation": "What the user wanted against what the answer gives.", "achieved": SCENARIOS[key][2]}


def blame_reply(key: str) -> dict[str, Any]:
    blame, step = SCENARIOS[key][3]
    return {"explanation": "The steps in order.", "blame": blame, "step": step, "reason": f"scripted {blame}"}


REPLIES = {"goal": goal_reply, "blame": blame_reply}
INVALID = {
    "goal": {"explanation": "x", "achieved": "mostly"},
    "blame": {"explanation": "x", "blame": "missed_hop", "step": 99, "reason": "r"},
}


class AgentJudge:
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
        faulty = FaultSchedule.reply(fault, "The agent did fine, I think.", json.dumps(INVALID[kind]))
        if faulty is not None:
            return faulty
        return Turn(text=json.dumps(REPLIES[kind](BY_ANSWER[answer])))


def scored(root, judge: AgentJudge, metrics: list[str], copies: int = 5, broken: bool = False):
    """(stored score records by (question id, label), judge calls) of a run of ``metrics`` on the fixed agent at
    the scripted judge."""
    import ragassay

    from conftest import write_project

    with OpenAIChatServer() as server:
        server.default = judge
        generator = (
            f'{{ name = "openai", options = {{ model = "judge", base_url = "{server.url}/v1", backoff_s = 0.0 }} }}'
        )
        tables = "".join(
            f'[[evaluation.metrics]]\nname = "{name}"\noptions = {{ generator = {generator} }}\n' for name in metrics
        )
        config = (
            f'[dataset]\noptions = {{ path = "qa.jsonl" }}\n[systems.agent]\nrag = "agentfix/fixed_agent"\n{tables}'
        )
        root.mkdir(parents=True, exist_ok=True)
        path = write_project(root, config, qa=samples(copies, broken), docs={})
        run = ragassay.run(path, plugins=[PLUGIN])
        records = {(r.question_id, r.label): r for r in run.data().scores}
        return records, server.calls
